"""Config files read when they are used: `agents.toml`, `policy.toml`, `settings.json`.

The service lives for days while the user edits these files by hand, so none of them is
read once and kept. Each use looks at the file (one `stat`) and reads it again only when
it changed. A version that cannot be used is reported once, naming the file and line,
and the last good version stays in force: a typo must not take the user's agents away
or change how permissions are answered. `advance` is that rule, pure; `ConfigFile` does
the looking and the reading around it. Nothing here knows the engine or the screen.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class ConfigError(ValueError):
    """A version of a config file that cannot be used; the message names the file and,
    where it can, the line."""


@dataclass(frozen=True)
class Identity:
    """What tells one version of a file from another without reading it."""

    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, status: os.stat_result) -> Identity:
        return cls(status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


Seen = Identity | str | None
"""What a look at the file found: a version, the error that kept it from being looked at
(a folder it cannot enter), or None when there is no file."""

NOT_LOOKED: object = object()
"""What was seen before the first look: equal to nothing a look finds."""


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A version that can be used, and what it has wrong that did not stop that (an
    unknown field, an entry left out)."""

    value: T
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Broken:
    """A version that cannot be used, and why (file and line)."""

    message: str


@dataclass(frozen=True)
class Version(Generic[T]):
    """What is in force after the last look at a file."""

    seen: Seen | object
    """What that look found (`NOT_LOOKED` before the first)."""
    value: T
    """The value in force: the last good version's, else the defaults."""
    good: bool = False
    """A good version has been read (no file at all is one: it means the defaults)."""
    broken: bool = False
    """The version last seen could not be used: `value` is an older one's."""
    problems: tuple[str, ...] = ()
    """What the version last seen has wrong; empty when it is fine."""


KEPT = "the version read before stays in force"
"""What a broken version means once a good one was read."""

DEFAULTS = "the defaults apply until it is fixed"
"""What a broken version means when no good one was ever read."""


def advance(
    current: Version[T],
    seen: Seen,
    outcome: Callable[[], Parsed[T] | Broken],
    *,
    kept: str = KEPT,
    defaults: str = DEFAULTS,
) -> tuple[Version[T], tuple[str, ...]]:
    """What is in force after a look that found `seen`, and the problems to report now.

    Nothing changed: nothing is read (`outcome` is not called) and nothing is reported.
    A change to a good version puts it in force (its warnings are reported once); a
    change to a broken one keeps the value in force and reports why once, saying what
    holds meanwhile (`kept`, or `defaults` when no good version was ever read)."""
    if seen == current.seen:
        return current, ()
    found = outcome()
    if isinstance(found, Broken):
        problem = f"{found.message} ({kept if current.good else defaults})"
        return Version(seen, current.value, current.good, True, (problem,)), (problem,)
    return Version(seen, found.value, True, False, found.warnings), found.warnings


Parse = Callable[[str, str, T], Parsed[T]]
"""Turns a file's text into its value: (text, the file's name, the value in force, for
parts of it to be kept) -> the value; raises ConfigError for a version that cannot be
used."""


class ConfigFile(Generic[T]):
    """One config file, read when it is used: `read()` at each use costs one `stat`
    while the file is unchanged."""

    def __init__(
        self,
        path: Path,
        parse: Parse[T],
        missing: T,
        *,
        kept: str = KEPT,
        defaults: str = DEFAULTS,
    ) -> None:
        self.path = path
        self._parse = parse
        self._missing = missing
        """The value when there is no file (the defaults)."""
        self._kept = kept
        self._defaults = defaults
        self.version: Version[T] = Version(NOT_LOOKED, missing)

    def read(self) -> tuple[T, tuple[str, ...]]:
        """The value in force now, and the problems of a version first seen by this call
        (each version's are reported once)."""
        seen = self._look()
        if seen == self.version.seen:
            return self.version.value, ()
        text: str | Broken | None = None
        if isinstance(seen, Identity):  # read from one descriptor: this text is that version
            seen, text = self._open(seen)
        elif isinstance(seen, str):
            text = Broken(f"{self.path}: cannot be read: {seen}")
        self.version, new = advance(
            self.version,
            seen,
            lambda: self._outcome(text),
            kept=self._kept,
            defaults=self._defaults,
        )
        return self.version.value, new

    @property
    def problems(self) -> tuple[str, ...]:
        """What the version last seen has wrong (for a client that attaches later)."""
        return self.version.problems

    def _look(self) -> Seen:
        try:
            return Identity.of(os.stat(self.path))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as error:
            return error.strerror or str(error)

    def _open(self, looked: Identity) -> tuple[Seen, str | Broken | None]:
        """The version the file holds now and its text (None: it went away meanwhile);
        one that cannot be opened keeps the identity `looked` found, so it is reported
        once, not at each use."""
        try:
            with open(self.path, "rb") as handle:
                seen = Identity.of(os.fstat(handle.fileno()))
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        except OSError as error:
            return looked, Broken(f"{self.path}: cannot be read: {error}")
        try:
            return seen, data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            return seen, Broken(f"{self.path}:{line}: cannot be read: it is not UTF-8 text")

    def _outcome(self, text: str | Broken | None) -> Parsed[T] | Broken:
        if text is None:
            return Parsed(self._missing)
        if isinstance(text, Broken):
            return text
        try:
            return self._parse(text, str(self.path), self.version.value)
        except ConfigError as error:
            return Broken(str(error))


_AT_LINE = re.compile(r"at line (\d+)")


def error_line(error: Exception, text: str) -> int:
    """The line a TOML error is at (tomllib says it in words: "at line 3, column 1"; "at
    end of document" is the last line)."""
    match = _AT_LINE.search(str(error))
    return int(match.group(1)) if match else len(text.splitlines()) or 1


def key_line(text: str, key: str) -> int | None:
    """The first line (from 1) that sets `key`, bare or quoted, or None."""
    pattern = re.compile(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def where(origin: str, line: int | None) -> str:
    """`file:line`, or the file alone when the line is not known."""
    return f"{origin}:{line}" if line else origin


class Source(Protocol[T_co]):
    """Where a value in force comes from: a config file read when used, or a value fixed
    by whoever made the engine (a test's registry)."""

    def read(self) -> tuple[T_co, tuple[str, ...]]:
        """The value now, and the problems to report now (each once)."""
        ...

    @property
    def problems(self) -> tuple[str, ...]:
        """What is wrong with it as last seen."""
        ...


class Fixed(Generic[T]):
    """A value given rather than read: it never changes and has no problems."""

    problems: tuple[str, ...] = ()

    def __init__(self, value: T) -> None:
        self.value = value

    def read(self) -> tuple[T, tuple[str, ...]]:
        return self.value, ()
