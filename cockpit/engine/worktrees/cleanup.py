"""The cleanup of worktree sessions: what each worktree takes and would lose, and removing
the chosen ones whole (the worktree, the branch Cockpit made, Cockpit's refs of the session
and its archive), never one with unmerged work unless the user said so explicitly."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from cockpit.api import CleanupItem
from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.archive import forget, remove
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.merged import (
    base_of,
    commits_not_in,
    is_merged,
    plural,
    uncommitted,
)
from cockpit.engine.worktrees.naming import slug
from cockpit.engine.worktrees.status import disk_size
from cockpit.records import Worktree, WorktreeArchive

REFS_ROOT = "refs/cockpit"
"""Where Cockpit keeps refs of its own (a session's under `refs/cockpit/<session id>/`)."""


def session_refs(session_id: str) -> str:
    """The folder of refs Cockpit keeps for one session."""
    return f"{REFS_ROOT}/{session_id}/"


def made_by_cockpit(branch: str, session_id: str) -> bool:
    """True when Cockpit made the branch for this session (its name ends with the
    session's id): only such a branch goes with its worktree; a branch the user picked is
    theirs."""
    return branch.endswith(f"-{slug(session_id)}")


def short_base(base: str) -> str:
    """A base as the user calls it: `main` for `refs/heads/main`, a commit by 8 digits."""
    if base.startswith("refs/heads/"):
        return base.removeprefix("refs/heads/")
    return base[:8] if len(base) == 40 else base


def refusal(item: CleanupItem) -> str | None:
    """Why a cleanup without force keeps this worktree (None: nothing would be lost)."""
    if not item.unmerged:
        return None
    return (
        f"Kept {item.branch} ({item.session}): {', '.join(item.unmerged)}; remove it anyway"
        " only with force (`--force`)."
    )


async def inspect(
    session_id: str,
    title: str,
    worktree: Worktree,
    archive: WorktreeArchive | None,
    last_activity: float,
) -> CleanupItem:
    """What removing this worktree would take away and lose."""
    path = Path(worktree.path)
    archived = archive is not None
    missing = not archived and not await asyncio.to_thread(path.is_dir)
    base = await base_of(worktree)
    lost: list[str] = []
    branch_there = await _branch_exists(worktree)
    merged = branch_there and await is_merged(worktree.repo, worktree.branch, base)
    if branch_there and not merged:
        ahead = await commits_not_in(worktree.repo, worktree.branch, base)
        lost.append(f"{plural(ahead, 'commit')} not in {short_base(base)}")
    if not archived and not missing:
        changed = await uncommitted(path, worktree.copied)
        if changed:
            lost.append(f"{plural(changed, 'uncommitted file')}")
    if archive is not None and archive.patch:
        lost.append("uncommitted work kept by its archive")
    size = 0 if missing or archived else await asyncio.to_thread(disk_size, path)
    if archive is not None and archive.folder:
        size += await asyncio.to_thread(disk_size, Path(archive.folder))
    return CleanupItem(
        session_id,
        title,
        worktree.path,
        worktree.branch,
        short_base(base),
        size,
        merged,
        tuple(lost),
        last_activity,
        missing,
        archived,
    )


async def _branch_exists(worktree: Worktree) -> bool:
    code, _, _ = await git.run(
        worktree.repo, "show-ref", "--verify", "--quiet", f"refs/heads/{worktree.branch}",
        check=False,
    )  # fmt: skip
    return code == 0


async def remove_everything(
    session_id: str, worktree: Worktree, archive: WorktreeArchive | None
) -> str:
    """Remove the worktree, the branch when Cockpit made it, the session's refs and its
    archive; what was removed, in a sentence."""
    removed = []
    if await asyncio.to_thread(Path(worktree.path).exists):
        await remove(worktree)
        removed.append(f"the worktree {worktree.path}")
    else:
        with contextlib.suppress(GitError):
            await git.run(worktree.repo, "worktree", "prune")
    kept = ""
    if made_by_cockpit(worktree.branch, session_id):
        if await _branch_exists(worktree):
            await git.run(worktree.repo, "branch", "-D", "--", worktree.branch)
            removed.append(f"the branch {worktree.branch}")
    else:
        kept = f" The branch {worktree.branch} stays: it was yours before the session."
    count = await drop_refs(worktree.repo, session_id)
    if count:
        removed.append(f"{plural(count, 'ref')} of Cockpit's")
    if archive is not None and archive.folder:
        await asyncio.to_thread(forget, Path(archive.folder))
        removed.append("its archive")
    said = ", ".join(removed) if removed else "nothing was left"
    return f"Removed {session_id}: {said}.{kept}"


async def drop_refs(repo: str, session_id: str) -> int:
    """Delete the refs Cockpit keeps for a session (its checkpoints); how many there
    were."""
    listed = await git.text(repo, "for-each-ref", "--format=%(refname)", session_refs(session_id))
    names = [name for name in listed.splitlines() if name]
    if names:
        commands = "".join(f"delete {name}\n" for name in names)
        await git.run(repo, "update-ref", "--stdin", input=os.fsencode(commands))
    return len(names)
