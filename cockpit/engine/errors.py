"""How the engine words what went wrong for the user: one line per error, whatever raised
it (the agent, the SDK reading its reply, the store, the system). The error a failed start
raises after its row is written is the contract's `StartError` (`cockpit.api`)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from cockpit.api import NotSaved
from cockpit.text.textout import describe_error
from store.database import unreadable

MESSAGE_KEYS = ("message", "details")
"""Where an agent's JSON-RPC error data holds its words: the Claude agent says what to set
under "message", the SDK puts an agent's exception under "details"."""


def describe(error: BaseException) -> str:
    """An error as one line for the user."""
    if isinstance(error, RequestError):
        return request_error_line(str(error), error.code, getattr(error, "data", None))
    if isinstance(error, ValidationError):
        first = error.errors()[0]["msg"]
        return f"it sent a reply Cockpit cannot read ({error.error_count()} problem(s): {first})"
    return describe_error(error)


@contextlib.contextmanager
def saved() -> Iterator[None]:
    """Around a write a client asked for: a write the database refused becomes the
    contract's NotSaved, worded as `describe` words it, so a client needs no database."""
    try:
        yield
    except sqlite3.Error as error:
        raise NotSaved(describe(error)) from error


def not_opened(path: Path, error: sqlite3.Error) -> Exception:
    """Why the store at `path` could not be opened to write, as the contract says it: a
    file that is not a database as `ls` says it (StoreUnreadable), any other refusal (a
    full disk: "disk I/O error") as NotSaved naming the file, worded as the system's own
    refusals are ("cannot write PATH: why")."""
    if isinstance(error, sqlite3.DatabaseError) and "not a database" in str(error):
        return unreadable(path, error)
    return NotSaved(f"cannot write {path}: {describe(error)}")


def request_error_line(title: str, code: int, data: Any) -> str:
    """A JSON-RPC error as a sentence: its title and the agent's own words when its data
    has some ("Authentication required: Set ANTHROPIC_API_KEY ..."), else its code. Other
    details follow only when they add something the words do not say already."""
    words, details = _words(data)
    if words and words != title:
        line = f"{title}: {words}" if title else words
    else:
        line = f"{title or 'JSON-RPC error'} (code {code})"
    extra = [f"{key}: {value}" for key, value in details if str(value) and str(value) not in line]
    return f"{line} ({'; '.join(extra)})" if extra else line


def _words(data: Any) -> tuple[str, list[tuple[str, Any]]]:
    """The message of an error's data, and its other details."""
    if data is None:
        return "", []
    if isinstance(data, str):
        return data.strip(), []
    if not isinstance(data, Mapping):
        return "", [("data", data)]
    details = [(str(key), value) for key, value in data.items()]
    for name in MESSAGE_KEYS:
        words = data.get(name)
        if isinstance(words, str) and words.strip():
            return words.strip(), [(key, value) for key, value in details if key != name]
    return "", details
