"""Merging a worktree session's branch into its base branch, in the user's checkout. The
merge is first made in git's object store alone (`git merge-tree --write-tree`, git 2.38):
a conflict is reported and nothing is touched. It is then done in the checkout only when
that checkout is clean and has the base branch checked out (a fast-forward when the base
has not moved, else a merge commit); otherwise it is refused, saying why, and nothing
changes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cockpit.api import MergeResult
from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import MERGE_TREE_VERSION, GitError
from cockpit.records import Worktree

FAST_FORWARD = "fast-forward"
MERGE_COMMIT = "merge commit"


def conflicted(output: bytes) -> tuple[str, ...]:
    """The conflicted files `git merge-tree --write-tree --name-only -z --no-messages`
    lists after the tree it wrote, each once."""
    names = [os.fsdecode(part) for part in output.split(b"\0")[1:] if part]
    return tuple(dict.fromkeys(names))


def merge_message(worktree: Worktree, target: str, session_id: str) -> str:
    """The message of the merge commit Cockpit makes."""
    return f"Merge branch '{worktree.branch}' into {target}\n\nCockpit session {session_id}.\n"


def target_branch(worktree: Worktree) -> str:
    """The branch the session's work goes back into: the base branch it was made from
    (for a session made from the checkout's HEAD, the branch checked out then).
    ValueError when there is none."""
    if worktree.base != "HEAD":
        return worktree.base
    if worktree.base_branch is None:
        raise ValueError(
            "This session was made from a commit, not a branch, so it has no base branch to"
            f" merge into: merge {worktree.branch} by hand with git, or push it."
        )
    return worktree.base_branch


async def merge(
    worktree: Worktree,
    session_id: str,
    *,
    fast_forward_only: bool = False,
    dry_run: bool = False,
) -> MergeResult:
    """Merge the session's branch into its base branch in the user's checkout (see the
    module); with `dry_run`, only say what would be done."""
    await git.require(MERGE_TREE_VERSION, "Merging a worktree session's branch needs")
    try:
        target = target_branch(worktree)
    except ValueError as error:
        return MergeResult(False, refusal=str(error))
    repo, branch = worktree.repo, worktree.branch
    if not await _branch_exists(repo, target):
        return MergeResult(False, target=target, refusal=f"There is no branch {target} in {repo}.")
    left = await _worktree_problem(worktree)
    if left:
        return MergeResult(False, target=target, refusal=left)
    if await _is_ancestor(repo, branch, target):
        return MergeResult(
            False, target=target, refusal=f"{target} already holds every commit of {branch}."
        )
    code, output, said = await git.run(
        repo, "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages",
        target, branch, check=False,
    )  # fmt: skip
    if code == 1:
        files = conflicted(output)
        return MergeResult(
            False,
            target=target,
            conflicts=files,
            refusal=f"Merging {branch} into {target} conflicts in {len(files)} file(s):"
            " nothing was changed.",
        )
    if code != 0:
        return MergeResult(False, target=target, refusal=f"git could not test the merge: {said}")
    how = FAST_FORWARD if await _is_ancestor(repo, target, branch) else MERGE_COMMIT
    if fast_forward_only and how != FAST_FORWARD:
        return MergeResult(
            False,
            how,
            target,
            refusal=f"{target} has moved on since {branch} left it: it cannot be fast-forwarded."
            " Merge with a merge commit, or rebase the branch first.",
        )
    refusal = await _checkout_problem(repo, target)
    if refusal or dry_run:
        return MergeResult(False, how, target, refusal=refusal)
    merging: tuple[str, ...]
    if how == FAST_FORWARD:
        merging = ("merge", "-q", "--ff-only", branch)
    else:
        message = merge_message(worktree, target, session_id)
        merging = ("merge", "-q", "--no-ff", "--no-edit", "-m", message, branch)
    code, _, said = await git.run(repo, *merging, check=False)
    if code != 0:  # the checkout changed since it was read: leave nothing half-applied
        if how == MERGE_COMMIT:
            await git.run(repo, "merge", "--abort", check=False)
        last = said.splitlines()[-1] if said else f"it exited with {code}"
        return MergeResult(False, how, target, refusal=f"git did not merge: {last}")
    commit = await git.text(repo, "rev-parse", "HEAD")
    return MergeResult(True, how, target, commit)


async def _checkout_problem(repo: str, target: str) -> str | None:
    """Why the merge cannot be done in the user's checkout now, or None."""
    head = await _checked_out(repo)
    if head != target:
        now = f"{head} is checked out" if head else "no branch is checked out"
        return (
            f"{repo} must have {target} checked out to merge into it, and {now}:"
            f" nothing was changed. Check out {target} there, then merge again."
        )
    _, changes, _ = await git.run(repo, "status", "--porcelain", "--untracked-files=no")
    if changes:
        return (
            f"{repo} has uncommitted changes: nothing was changed. Commit or put them away"
            " there, then merge again."
        )
    return None


async def _worktree_problem(worktree: Worktree) -> str | None:
    """Why the branch is not ready to merge (work left uncommitted in the worktree), or
    None."""
    path = Path(worktree.path)
    if not await asyncio.to_thread(path.is_dir):
        return None  # the branch is what is merged: a worktree deleted by hand takes nothing
    _, changes, _ = await git.run(path, "status", "--porcelain", locks=False)
    if changes:
        count = len(changes.decode(errors="replace").splitlines())
        return (
            f"The worktree has {count} uncommitted change(s) that a merge would leave out:"
            " nothing was changed. Commit them (or discard them), then merge again."
        )
    return None


async def _checked_out(repo: str) -> str | None:
    code, head, _ = await git.run(repo, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    return (os.fsdecode(head).strip() or None) if code == 0 else None


async def _branch_exists(repo: str, name: str) -> bool:
    code, _, _ = await git.run(
        repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}", check=False
    )
    return code == 0


async def _is_ancestor(repo: str, older: str, newer: str) -> bool:
    try:
        code, _, _ = await git.run(repo, "merge-base", "--is-ancestor", older, newer, check=False)
    except GitError:
        return False
    return code == 0
