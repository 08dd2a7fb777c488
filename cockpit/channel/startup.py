"""How a service started in the background tells the client that started it whether it
came up, and if not, why.

The client passes the service the writing end of a pipe (its number in
COCKPIT_SERVICE_REPORT). The service writes one JSON line on it: `{"ready": true}` once it
listens, or the error that stopped it (its type and message); then it closes it. Without
this word the client could only wait for a socket that never comes and say "see the log":
a store written by a newer Cockpit, or a socket folder of another user's, must reach the
user as the sentence that explains it.

A service that ends without a word (another one won the store's lock, or it was killed)
closes the pipe by exiting: the client then goes by its exit code.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Mapping, MutableMapping
from typing import Any

from cockpit.protocol import error_data

ALREADY_RUNNING = 75
"""The exit code of `cockpit service` when another service holds the store's lock (two
clients started one at the same instant: the other one serves them both)."""

REPORT_ENV = "COCKPIT_SERVICE_REPORT"
"""The descriptor a service started by a client writes its start's outcome on."""

WORD_LIMIT = 64 * 1024
"""The longest word a client reads (a service's is a line or two)."""

MESSAGE_LIMIT = 2000
"""The characters of an error's message a service sends (one write on a pipe, whole)."""


class ReportPipe:
    """The client's end: a pipe whose writing end goes to the service it starts."""

    def __init__(self) -> None:
        self._read, self.write = os.pipe()
        os.set_blocking(self._read, False)
        self._heard = b""
        self.word: dict[str, Any] | None = None
        """What the service said (None: nothing yet, or it ended without a word)."""
        self.ended = False
        """No word will come now (it came, or the pipe ended without one)."""

    def environ(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The service's environment: `environ`, with the descriptor it reports on."""
        return {**environ, REPORT_ENV: str(self.write)}

    def passed(self) -> None:
        """The service has the writing end: this process lets go of its own copy, so that
        the pipe ends when the service does. Once only: the number may be reused at once
        (by the socket to that very service)."""
        if self.write >= 0:
            os.close(self.write)
            self.write = -1

    def listen(self) -> dict[str, Any] | None:
        """The service's word once it has come, read without waiting."""
        while self.word is None and not self.ended and self._read >= 0:
            try:
                part = os.read(self._read, WORD_LIMIT)
            except BlockingIOError:
                break
            if not part:
                self.ended = True
            self._heard += part
            line, newline, _ = self._heard.partition(b"\n")
            if newline or self.ended or len(self._heard) > WORD_LIMIT:
                self.word = _parse(line) if line else None
                self.ended = True
        return self.word

    def close(self) -> None:
        self.passed()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        word = json.loads(line)
    except ValueError:
        return None
    return word if isinstance(word, dict) else None


class Reporter:
    """The service's end: says once whether it came up, to the client that started it
    (nothing, when no client passed it a pipe: started in the foreground)."""

    def __init__(self, descriptor: int | None) -> None:
        self._descriptor = descriptor

    @classmethod
    def claim(cls, environ: MutableMapping[str, str]) -> Reporter:
        """Take the descriptor COCKPIT_SERVICE_REPORT names out of `environ` (the agents
        the service starts never see it): used only when it is a pipe, so a variable left
        set by hand cannot have the service write on its own terminal or a file."""
        value = environ.pop(REPORT_ENV, "")
        try:
            descriptor = int(value)
            if descriptor > 2 and stat.S_ISFIFO(os.fstat(descriptor).st_mode):
                os.set_inheritable(descriptor, False)
                return cls(descriptor)
        except (ValueError, OSError):
            pass
        return cls(None)

    def ready(self) -> None:
        """It listens."""
        self._say({"ready": True})

    def failed(self, error: BaseException) -> None:
        """It could not start (said only when `ready` was not)."""
        word = error_data(error)
        word["message"] = str(word.get("message", ""))[:MESSAGE_LIMIT]
        self._say(word)

    def _say(self, word: dict[str, Any]) -> None:
        if self._descriptor is None:
            return
        line = json.dumps(word).encode() + b"\n"
        with contextlib.suppress(OSError):  # a client that gave up and went
            os.write(self._descriptor, line)
        self.close()

    def close(self) -> None:
        if self._descriptor is not None:
            with contextlib.suppress(OSError):
                os.close(self._descriptor)
            self._descriptor = None
