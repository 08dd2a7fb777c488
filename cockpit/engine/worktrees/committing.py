"""Committing a worktree session's work: everything in its worktree (`git add -A`:
untracked files too, ignored ones and those copied in from the checkout not) in one commit
on its branch, with the user's message."""

from __future__ import annotations

from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.project import keep_out
from cockpit.records import Worktree


def message_problem(message: str) -> str | None:
    """Why `message` cannot be a commit's message, or None when it can."""
    if not message.strip():
        return "A commit needs a message: say what the change does."
    return None


async def commit(worktree: Worktree, message: str) -> str:
    """Stage everything in the worktree and commit it on the session's branch; a sentence
    naming the commit. ValueError when there is no message or nothing to commit."""
    problem = message_problem(message)
    if problem:
        raise ValueError(problem)
    await git.run(worktree.path, "add", "-A", "--", *keep_out(worktree.copied))
    code, _, _ = await git.run(worktree.path, "diff", "--cached", "--quiet", check=False)
    if code == 0:
        raise ValueError(f"Nothing to commit on {worktree.branch}: the worktree has no change.")
    try:
        await git.run(worktree.path, "commit", "-q", "-F", "-", input=message.encode())
    except GitError as error:
        raise ValueError(str(error)) from error
    line = await git.text(worktree.path, "log", "-1", "--format=%h %s")
    return f"Committed on {worktree.branch}: {line}"
