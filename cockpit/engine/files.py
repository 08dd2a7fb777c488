"""The files an agent may read and write: everything inside the session's root, nothing else.

Paths are resolved through symlinks before they are checked, so `..`, absolute paths
elsewhere and links that point out of the root are all refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

from cockpit.atomic_file import write_atomically
from cockpit.environment import current_umask
from cockpit.inside_root import real_path, under
from store.text import clean_text

MAX_READ_BYTES = 16 * 1024 * 1024
"""Largest file an agent may read in one request."""


MAX_PATH = 4096
"""The longest path an agent may name (Linux's own limit)."""


class Refused(PermissionError):
    """A path an agent may not use; the message says why."""


class OutsideRoot(Refused):
    """The path resolves outside the session's root."""


class CockpitsOwn(Refused):
    """The path lies in one of Cockpit's own folders (its store, config or logs)."""


class FileTooLarge(OSError):
    """The file is larger than an agent may read at once."""


def confine(root: Path, path: str, own: Sequence[Path] = (), allowed: Sequence[Path] = ()) -> Path:
    """The real path of `path` (absolute, relative to `root`, or from `~`), if it lies inside `root`
    and in none of the folders `own` (Cockpit's, which may lie inside a root such as `~`),
    unless it lies in one of `allowed`: a worktree session's own worktree, which Cockpit
    keeps in its data folder, is the agent's while the rest of that folder is not.

    Raises OutsideRoot or CockpitsOwn otherwise, naming the paths.
    """
    if not path:
        raise Refused("an empty path names no file")
    if "\x00" in path:
        raise Refused("a path with a NUL character in it names no file")
    if len(path) > MAX_PATH:
        raise Refused(f"a path of {len(path):,} characters is longer than any ({MAX_PATH:,})")
    real = real_path(path, root)
    real_root = os.path.realpath(root)
    if not under(real, real_root):
        raise OutsideRoot(f"{path} is outside the session's folder {real_root}")
    if any(under(real, os.path.realpath(folder)) for folder in allowed):
        return Path(real)
    for folder in own:
        real_folder = os.path.realpath(folder)
        if under(real, real_folder):
            raise CockpitsOwn(f"{path} is in Cockpit's own folder {real_folder}")
    return Path(real)


def select_lines(text: str, line: int | None, limit: int | None) -> str:
    """The `limit` lines of `text` starting at 1-based `line` (the whole text by default)."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    end = start + limit if limit is not None else None
    return "".join(lines[start:end])


def read_text(
    root: Path,
    path: str,
    line: int | None = None,
    limit: int | None = None,
    own: Sequence[Path] = (),
    allowed: Sequence[Path] = (),
) -> str:
    """Read a text file inside `root` as UTF-8 (undecodable bytes become U+FFFD).

    Only a regular file is read: a FIFO would wait for a writer forever (and the thread
    reading it kept `cockpit run` from exiting), a device may never end. It is opened
    without waiting and checked before a byte is read. Nothing in `own` is read (but what
    lies in `allowed`: see `confine`)."""
    real = confine(root, path, own, allowed)
    descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        status = os.fstat(descriptor)
        _must_be_a_file(path, status.st_mode)
        if status.st_size > MAX_READ_BYTES:
            raise FileTooLarge(
                f"{path} is {status.st_size:,} bytes; an agent may read at most {MAX_READ_BYTES:,}"
            )
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        data = handle.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:  # it grew while it was read
        raise FileTooLarge(f"{path} is over {MAX_READ_BYTES:,} bytes")
    return select_lines(data.decode("utf-8", "replace"), line, limit)


def write_text(
    root: Path,
    path: str,
    content: str,
    own: Sequence[Path] = (),
    umask: int | None = None,
    allowed: Sequence[Path] = (),
) -> Path:
    """Write a text file inside `root` and outside `own`, creating missing folders; the
    write is atomic (a reader never sees half a file) and keeps an existing file's
    permissions. A new file or folder gets the modes `umask` gives: the agent's, which
    the service's own (a stale start-up's) is not (None: this process's). `allowed` as
    for `confine`."""
    real = confine(root, path, own, allowed)
    if real == Path(os.path.realpath(root)):  # its temporary file went to the root's parent
        raise Refused(f"{path} is the session's folder, not a file")
    umask = current_umask() if umask is None else umask
    make_folders(real.parent, 0o777 & ~umask)
    existing = real.stat() if real.exists() else None
    if existing is not None:
        _must_be_a_file(path, existing.st_mode)
    mode = existing.st_mode & 0o7777 if existing is not None else None
    data = clean_text(content).encode("utf-8")
    write_atomically(real, data, mode if mode is not None else 0o666 & ~umask)
    return real


def make_folders(folder: Path, mode: int) -> None:
    """Create `folder` and the folders missing above it, each with `mode` exactly (mkdir
    alone would take away this process's umask too)."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir(exist_ok=True)
        os.chmod(made, mode)


def _must_be_a_file(path: str, mode: int) -> None:
    """Refuse anything but a regular file: a folder, or a FIFO, socket or device."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{path} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise Refused(f"{path} is not a regular file (a FIFO, a socket or a device)")
