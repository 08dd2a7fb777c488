"""Copying the files `.cockpit.toml` lists (`.env`...) from the user's checkout into a
new worktree. Both ends are checked where they really lead: a link in the checkout that
points out of it, or a folder of the worktree that is a link out of it (committed so by
whoever wrote the repository), is refused, and nothing is written through it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from cockpit.engine.worktrees.project import copy_problem


@dataclass(frozen=True)
class Copied:
    """What a copy-in did: the paths copied, and why each other one was not."""

    paths: tuple[str, ...]
    problems: tuple[str, ...]


def inside(path: str, folder: str) -> bool:
    """True when the real path `path` is `folder` or lies in it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def copy_in(checkout: Path, worktree: Path, paths: tuple[str, ...]) -> Copied:
    """Copy each of `paths` (relative to both folders) from `checkout` to `worktree`,
    links as links; a file missing from the checkout is said, not an error."""
    top, into = os.path.realpath(checkout), os.path.realpath(worktree)
    copied: list[str] = []
    problems: list[str] = []
    for path in paths:
        problem = copy_problem(path) or _copy_one(top, into, path)
        if problem is None:
            copied.append(path)
        else:
            problems.append(problem)
    return Copied(tuple(copied), tuple(problems))


def _copy_one(top: str, into: str, path: str) -> str | None:
    source = os.path.join(top, path)
    if not os.path.lexists(source):
        return f"{path} is not in your checkout: not copied in"
    if not inside(os.path.realpath(source), top):
        return f"{path} leads out of the repository: not copied in"
    target = os.path.join(into, path)
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    if not inside(os.path.realpath(parent), into) or os.path.islink(target):
        return f"{path} would be written out of the worktree: not copied in"
    if os.path.isdir(source) and not os.path.islink(source):
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)
    return None
