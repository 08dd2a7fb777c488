"""Where a worktree session's work stands: its branch, its changed files and how far it is
ahead of and behind its base, read with git's own commands taking no lock (an agent's own
`git` never waits for the rail), and how much disk the worktree takes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cockpit.api import WorktreeStatus
from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.project import keep_out
from cockpit.records import Worktree


def count_changes(porcelain: bytes) -> int:
    """How many files `git status --porcelain -z` lists (a rename or copy names two paths
    and is one change)."""
    entries = porcelain.split(b"\0")
    count, index = 0, 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        count += 1
        if entry[:1] in (b"R", b"C"):
            index += 1  # the path it came from
    return count


def ahead_behind(counts: str) -> tuple[int, int]:
    """(ahead, behind) from `git rev-list --left-right --count BASE...HEAD` ("behind ahead")."""
    parts = counts.split()
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        return 0, 0
    return int(parts[1]), int(parts[0])


async def worktree_status(worktree: Worktree) -> WorktreeStatus:
    """The worktree's state now; missing when its folder is gone."""
    path = Path(worktree.path)
    if not await asyncio.to_thread(path.is_dir):
        return WorktreeStatus(worktree.branch, missing=True)
    code, head, _ = await git.run(path, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    branch = os.fsdecode(head).strip() if code == 0 else ""
    _, changes, _ = await git.run(
        path, "status", "--porcelain", "-z", "--untracked-files=all", "--",
        *keep_out(worktree.copied), locks=False,
    )  # fmt: skip
    base = await base_ref(path, worktree)
    try:
        counts = await git.text(
            path, "rev-list", "--left-right", "--count", f"{base}...HEAD", locks=False
        )
    except GitError:  # the base went away, or HEAD has no commit
        counts = ""
    ahead, behind = ahead_behind(counts)
    return WorktreeStatus(branch or worktree.branch, count_changes(changes), ahead, behind)


async def base_ref(path: Path, worktree: Worktree) -> str:
    """What the branch is compared with: the base branch as it is now, or the commit it
    was made from (a base of "HEAD", or a base branch since deleted)."""
    if worktree.base != "HEAD":
        ref = f"refs/heads/{worktree.base}"
        code, _, _ = await git.run(path, "show-ref", "--verify", "--quiet", ref, check=False)
        if code == 0:
            return ref
    return worktree.base_commit


def disk_size(folder: Path) -> int:
    """Bytes `folder` takes on disk (as `du` counts them: blocks, links not followed);
    0 when it is gone."""
    total = 0
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                status = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += status.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return total
