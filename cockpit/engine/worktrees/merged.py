"""Whether a worktree session's branch is merged into its base, and what would be lost if
its worktree went: a branch is merged when its base contains it (a merge or a fast-forward)
or contains a commit making the very same change (a squash merge); the uncommitted changes
and untracked files of its worktree are never merged anywhere."""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.project import keep_out
from cockpit.engine.worktrees.status import count_changes
from cockpit.records import Worktree


async def base_of(worktree: Worktree) -> str:
    """What the branch merges into: its base branch as it is now, or the branch the user's
    checkout is on (a base of "HEAD", or a base branch since deleted), or the commit it was
    made from."""
    if worktree.base != "HEAD":
        ref = f"refs/heads/{worktree.base}"
        code, _, _ = await git.run(
            worktree.repo, "show-ref", "--verify", "--quiet", ref, check=False
        )
        if code == 0:
            return ref
    code, head, _ = await git.run(worktree.repo, "symbolic-ref", "-q", "HEAD", check=False)
    return os.fsdecode(head).strip() if code == 0 else worktree.base_commit


async def is_merged(repo: str, branch: str, base: str) -> bool:
    """True when `base` holds the work of `branch`: it contains the branch's commits, or
    (a squash merge) a commit whose change equals the branch's whole change since they
    parted (`git cherry` compares changes, not commits)."""
    code, _, _ = await git.run(repo, "merge-base", "--is-ancestor", branch, base, check=False)
    if code == 0:
        return True
    code, output, _ = await git.run(repo, "merge-base", base, branch, check=False)
    parted = os.fsdecode(output).strip()
    if code != 0 or not parted:
        return False  # no history in common
    tree = await git.text(repo, "rev-parse", f"{branch}^{{tree}}")
    if tree == await git.text(repo, "rev-parse", f"{parted}^{{tree}}"):
        return True  # the branch changed nothing in the end
    _, made, _ = await git.run(
        repo, "commit-tree", tree, "-p", parted, "-m", "squash check", env=git.IDENTITY
    )
    squashed = os.fsdecode(made).strip()
    cherry = await git.text(repo, "cherry", base, squashed)
    return cherry.startswith("-")


async def commits_not_in(repo: str, branch: str, base: str) -> int:
    """How many commits of `branch` its base does not contain."""
    code, output, _ = await git.run(repo, "rev-list", "--count", f"{base}..{branch}", check=False)
    counted = os.fsdecode(output).strip()
    return int(counted) if code == 0 and counted.isdigit() else 0


async def uncommitted(path: Path, copied: tuple[str, ...] = ()) -> int:
    """How many files of the worktree at `path` differ from its HEAD or are untracked
    (ignored ones, and those `copied` in from the checkout, not)."""
    _, changes, _ = await git.run(
        path, "status", "--porcelain", "-z", "--untracked-files=all", "--", *keep_out(copied),
        locks=False,
    )  # fmt: skip
    return count_changes(changes)


def plural(count: int, word: str) -> str:
    """`1 commit`, `2 commits`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
