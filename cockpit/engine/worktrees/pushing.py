"""Pushing a worktree session's branch to a remote of the user's checkout, tracking it
(`git push -u`), with no terminal to ask on: a remote that wants a password it has no
other way to get fails with git's own words."""

from __future__ import annotations

from cockpit.engine.worktrees import git
from cockpit.records import Worktree


async def push(worktree: Worktree, remote: str = "origin") -> str:
    """Push the session's branch to `remote`; a sentence saying where it went. ValueError
    when the repository has no such remote or git refused."""
    remotes = (await git.text(worktree.path, "remote")).split()
    if remote not in remotes:
        known = ", ".join(remotes) if remotes else "none"
        raise ValueError(
            f"The repository has no remote {remote!r} (its remotes: {known}): add one with"
            f" `git remote add {remote} URL`, or name another."
        )
    code, _, said = await git.run(
        worktree.path, "push", "-u", "--porcelain", remote,
        f"refs/heads/{worktree.branch}:refs/heads/{worktree.branch}", check=False,
    )  # fmt: skip
    if code != 0:
        last = said.splitlines()[-1] if said else f"it exited with {code}"
        raise ValueError(f"git did not push {worktree.branch} to {remote}: {last}")
    return f"Pushed {worktree.branch} to {remote}, which it now tracks."
