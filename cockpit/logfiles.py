"""Cockpit's log files (`cockpit.log`, and `service.log` for a service started in the
background): owner-only, silent when they cannot be written, and rotated by size, so that
nothing a client or an agent does can grow them without end."""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Sequence
from logging.handlers import RotatingFileHandler
from pathlib import Path

from cockpit.paths import private_dir

LOG_BYTES = 4 * 1024 * 1024
"""The size past which a log file is rotated: the current one becomes `NAME.1`."""

LOG_BACKUPS = 3
"""How many rotated files are kept (`NAME.1` ... `NAME.3`): a log takes at most
(LOG_BACKUPS + 1) * LOG_BYTES."""

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RotatingLog(RotatingFileHandler):
    """A log file created owner-only when the first record comes, rotated past `max_bytes`,
    and silent when it cannot be written (the terminal is never the fallback)."""

    def __init__(
        self, path: Path, max_bytes: int | None = None, backups: int | None = None
    ) -> None:
        super().__init__(
            path,
            maxBytes=LOG_BYTES if max_bytes is None else max_bytes,
            backupCount=LOG_BACKUPS if backups is None else backups,
            encoding="utf-8",
            delay=True,
        )
        self.setFormatter(logging.Formatter(FORMAT))

    def _open(self) -> io.TextIOWrapper:
        path = Path(self.baseFilename)
        private_dir(path.parent)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(descriptor, "a", encoding="utf-8")  # the handler closes it

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that cannot be written is dropped, never shown on the terminal."""


class OutputLog(RotatingLog):
    """The log that is also the process's own output (`service.log` is the detached
    service's stdout and stderr): each time the file is opened anew, after a rotation,
    those descriptors follow it, so what the process prints, and a crash's traceback,
    land in the current file and count towards its size."""

    def __init__(
        self,
        path: Path,
        descriptors: Sequence[int] = (1, 2),
        max_bytes: int | None = None,
        backups: int | None = None,
    ) -> None:
        super().__init__(path, max_bytes, backups)
        self.descriptors = tuple(descriptors)

    def _open(self) -> io.TextIOWrapper:
        stream = super()._open()
        for descriptor in self.descriptors:
            os.dup2(stream.fileno(), descriptor)
        return stream


def writes_to(descriptor: int, path: Path) -> bool:
    """Whether `descriptor` is open on the file at `path` (a service started in the
    background writes its output to its log)."""
    try:
        opened, named = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)
