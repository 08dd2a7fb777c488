"""Discarding a worktree session's work, undoably. What the worktree holds (its commits,
staged, unstaged and untracked files; ignored ones are never touched) is first kept as a
commit of Cockpit's own under `refs/cockpit/<session>/discard-<n>`, made with a scratch
index so the agent's index and branch are left alone; then the branch and the files go
back to the base. Undoing puts the branch back where it was and the files as they were."""

from __future__ import annotations

import os
import tempfile

from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.project import clean_spared, keep_out
from cockpit.records import Worktree

PREFIX = "discard-"


def discard_ref(session_id: str, number: int) -> str:
    """The ref that keeps what discard `number` of a session put away."""
    return f"refs/cockpit/{session_id}/{PREFIX}{number}"


def last_number(refs: str, session_id: str) -> int:
    """The highest discard number among `refs` (one full ref name a line), 0 for none."""
    start = f"refs/cockpit/{session_id}/{PREFIX}"
    numbers = [
        int(line.removeprefix(start))
        for line in refs.splitlines()
        if line.startswith(start) and line.removeprefix(start).isdigit()
    ]
    return max(numbers, default=0)


async def keep_state(worktree: Worktree, session_id: str) -> str:
    """Keep the worktree's state (its HEAD as parent, every file but the ignored ones as
    tree) under a new discard ref, through a scratch index; the ref's name."""
    path = worktree.path
    with tempfile.TemporaryDirectory(prefix="cockpit-index-") as scratch:
        index = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
        await git.run(path, "read-tree", "HEAD", env=index)
        await git.run(path, "add", "-A", "--", *keep_out(worktree.copied), env=index)
        tree = (await git.run(path, "write-tree", env=index))[1].decode().strip()
    head = await git.text(path, "rev-parse", "HEAD")
    _, made, _ = await git.run(
        path,
        "commit-tree", tree, "-p", head, "-m", f"Cockpit: what session {session_id} discarded",
        env=git.IDENTITY,
    )  # fmt: skip
    ref = discard_ref(session_id, await _last(path, session_id) + 1)
    await git.run(path, "update-ref", ref, made.decode().strip())
    return ref


async def discard(worktree: Worktree, session_id: str) -> str:
    """Keep the worktree's state, then put its branch and files back at the base commit
    (ignored files stay); a sentence saying how to undo it."""
    ref = await keep_state(worktree, session_id)
    await git.run(worktree.path, "reset", "-q", "--hard", worktree.base_commit)
    await git.run(worktree.path, "clean", "-q", "-f", "-d", *clean_spared(worktree.copied))
    return (
        f"Discarded: {worktree.branch} and its files are back at {worktree.base_commit[:8]}"
        f" (ignored files, and those copied in, kept). What was there is kept as {ref}:"
        f" `cockpit discard {session_id} --undo` brings it back."
    )


async def undo_discard(worktree: Worktree, session_id: str) -> str:
    """Put back what the last discard kept: the branch where it was, the files as they
    were (all unstaged); the kept ref goes. ValueError when there is none."""
    path = worktree.path
    number = await _last(path, session_id)
    if number == 0:
        raise ValueError("There is no discard of this session to undo.")
    head = await git.text(path, "rev-parse", "HEAD")
    _, changes, _ = await git.run(path, "status", "--porcelain")
    if head != worktree.base_commit or changes:
        raise ValueError(
            "The worktree changed since the discard, and undoing it would overwrite that:"
            " discard again first (it is kept too), then undo twice."
        )
    ref = discard_ref(session_id, number)
    await git.run(path, "reset", "-q", "--hard", f"{ref}^")
    await git.run(path, "read-tree", "--reset", "-u", ref)
    await git.run(path, "reset", "-q")
    await git.run(path, "update-ref", "-d", ref)
    return f"The discard is undone: {worktree.branch} and its files are as they were."


async def _last(path: str, session_id: str) -> int:
    """The number of the session's last discard (0: none)."""
    refs = await git.text(
        path, "for-each-ref", "--format=%(refname)", f"refs/cockpit/{session_id}/"
    )
    return last_number(refs, session_id)
