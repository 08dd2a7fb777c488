"""What a worktree session changed: every file that differs between where its branch left
its base (their merge base) and the worktree's files now, committed or not, untracked
ones included and ignored ones not, each with both its texts for the diff rendering when
it is text under a size bound."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cockpit.api import FileChange
from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.project import keep_out
from cockpit.engine.worktrees.status import base_ref
from cockpit.records import Worktree

TEXT_BYTES = 512 * 1024
"""The largest file whose texts are given for a diff: a bigger one is named, not shown."""

_STATUS = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}


def is_binary(data: bytes) -> bool:
    """Whether `data` is not text: a NUL byte (as git judges it) or not UTF-8."""
    if b"\0" in data[:8000]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def name_status(output: bytes) -> list[tuple[str, str]]:
    """(status word, path) of each entry `git diff --name-status -z --no-renames` lists."""
    parts = [os.fsdecode(part) for part in output.split(b"\0")]
    found = []
    for letter, path in zip(parts[0::2], parts[1::2], strict=False):
        if letter and path:
            found.append((_STATUS.get(letter[:1], "modified"), path))
    return found


def untracked(output: bytes) -> list[str]:
    """The paths `git ls-files -z` lists."""
    return [os.fsdecode(name) for name in output.split(b"\0") if name]


def changed_file(path: str, status: str, old: bytes | None, new: bytes | None) -> FileChange:
    """A change with its texts, or marked unreadable (binary, or too large)."""
    sides = [side for side in (old, new) if side is not None]
    if any(is_binary(side) for side in sides):
        return FileChange(path, status, readable=False, binary=True)
    if any(len(side) > TEXT_BYTES for side in sides):
        return FileChange(path, status, readable=False)
    return FileChange(
        path,
        status,
        old.decode("utf-8") if old is not None else None,
        new.decode("utf-8") if new is not None else None,
    )


async def merge_base(path: Path, worktree: Worktree) -> str:
    """Where the session's branch left its base: the merge base of the base (as it is
    now) and the branch, or the commit it was made from when they share none."""
    base = await base_ref(path, worktree)
    code, output, _ = await git.run(path, "merge-base", base, "HEAD", check=False, locks=False)
    found = os.fsdecode(output).strip()
    return found if code == 0 and found else worktree.base_commit


async def changes(worktree: Worktree) -> list[FileChange]:
    """Every file the session changed against its merge base with the base, by path
    (ValueError when its worktree is gone)."""
    path = Path(worktree.path)
    if not await asyncio.to_thread(path.is_dir):
        raise ValueError(f"The worktree {path} is missing: it was deleted by hand.")
    start = await merge_base(path, worktree)
    spec = keep_out(worktree.copied)  # what was copied in is not the session's change
    _, listed, _ = await git.run(
        path, "diff", "--name-status", "-z", "--no-renames", start, "--", *spec, locks=False
    )
    _, others, _ = await git.run(
        path, "ls-files", "--others", "--exclude-standard", "-z", "--", *spec, locks=False
    )
    entries = name_status(listed) + [("added", name) for name in untracked(others)]
    found = []
    for status, name in sorted(entries, key=lambda entry: entry[1]):
        old = None if status == "added" else await _blob(path, start, name)
        new = None if status == "deleted" else await asyncio.to_thread(_read, path / name)
        found.append(changed_file(name, status, old, new))
    return found


async def _blob(path: Path, commit: str, name: str) -> bytes | None:
    """The file `name` as commit `commit` holds it (None when it holds none)."""
    try:
        _, data, _ = await git.run(path, "cat-file", "blob", f"{commit}:{name}", locks=False)
    except GitError:
        return None
    return data


def _read(path: Path) -> bytes | None:
    """The file's bytes, at most one past the bound (a link: its target's name)."""
    try:
        if path.is_symlink():
            return os.fsencode(os.readlink(path))
        with path.open("rb") as file:
            return file.read(TEXT_BYTES + 1)
    except OSError:
        return None
