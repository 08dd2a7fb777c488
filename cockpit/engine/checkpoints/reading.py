"""The tree of a work tree's files as they are now: tracked and untracked, never ignored,
never a file copied in from the user's checkout.

The quick way keeps a private copy of the agent's index in the work tree's git folder,
with git's untracked cache, and lets `git status` say which paths differ from it; only
those get new entries and only their folders new trees (`patching`). The copy is made
afresh whenever the agent's index changes, and git only ever refreshes its file stats,
so it tracks exactly what the agent's index tracks: a file that became ignored is never
taken. After each checkpoint the copy is refreshed in the background, off every key's
and turn's path. Anything unusual (a merge under way, very many paths, a git that
fails) takes the sure way instead: `git add -A` into a fresh copy of the agent's index.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from cockpit.engine.checkpoints.git import GitError, git
from cockpit.engine.checkpoints.patching import (
    Entry,
    folders_of,
    mktree_input,
    patch_trees,
    read_listing,
    read_stage,
    read_status,
    spare_copied,
)
from cockpit.engine.worktrees.git import GIT_TIMEOUT, conversation
from cockpit.engine.worktrees.project import keep_out

STATUS = (
    "-c",
    "core.untrackedCache=true",
    "-c",
    "status.showUntrackedFiles=all",
    "status",
    "--porcelain",
    "-z",
    "--no-renames",
    "--ignore-submodules=dirty",
    "--untracked-files=all",
)
"""What differs from the kept index, every untracked file named (the untracked cache
serves `--untracked-files=all` only when the setting says all too)."""

MOST_PATHS = 1000
"""More differing paths than this take the sure way: the quick one saves nothing then."""

STALE_LOCK = 60.0
"""Seconds after which a lock on the kept index is taken as left by a killed git."""

Signature = tuple[int, int, int, int, bytes]


@contextlib.asynccontextmanager
async def scratch_index() -> AsyncIterator[dict[str, str]]:
    """A private index file for git to write, removed afterwards."""
    folder = await asyncio.to_thread(tempfile.mkdtemp, prefix="cockpit-index-")
    try:
        yield {"GIT_INDEX_FILE": os.path.join(folder, "index")}
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


class TreeReader:
    """Reads the tree of the files in the work tree at `top` as they are now."""

    def __init__(self, top: Path, index: Path, kept: Path, copied: tuple[str, ...]) -> None:
        self.top = top
        self.index = index
        """The agent's index: read, never written."""
        self.kept = kept
        """Cockpit's copy of it, with git's untracked cache."""
        self.copied = copied
        self._lock = asyncio.Lock()
        """Held while the kept index is read or written: its copy and its tree agree."""
        self._copied_from: Signature | None = None
        self._base: tuple[str, dict[bytes, Entry]] | None = None
        self._refreshing: asyncio.Task[None] | None = None

    async def read(self) -> str:
        """The tree of the files now, the quick way when it can."""
        return await self.quick() or await self.sure()

    async def sure(self) -> str:
        """The tree of the files now, by staging everything into a copy of the agent's
        index (its file stats spare git reading every unchanged file again)."""
        async with scratch_index() as env:
            await asyncio.to_thread(_copy, self.index, Path(env["GIT_INDEX_FILE"]))
            spec = keep_out(self.copied)
            await git(
                self.top, "-c", "advice.addEmbeddedRepo=false", "add", "-A", "--", *spec, env=env
            )
            return os.fsdecode(await git(self.top, "write-tree", env=env)).strip()

    def refresh_soon(self) -> None:
        """Refresh the kept index in the background (after a checkpoint, so the next one
        finds its stats and untracked cache current)."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.create_task(self._refresh())

    async def settled(self) -> None:
        """Wait for a refresh under way, if any (its failure is its own; a cancel of the
        caller is the caller's, and goes on)."""
        if self._refreshing is not None and not self._refreshing.done():
            await asyncio.wait({self._refreshing})

    async def _refresh(self) -> None:
        with contextlib.suppress(GitError, OSError):
            async with self._lock:
                await asyncio.to_thread(_clear_stale_lock, self.kept)
                await asyncio.to_thread(self._follow)
                await git(self.top, *STATUS, env=self._kept_env)  # writes the kept index
                await self._base_tree()

    # -- the quick way -------------------------------------------------------------------------

    @property
    def _kept_env(self) -> dict[str, str]:
        return {"GIT_INDEX_FILE": os.fspath(self.kept)}

    @property
    def no_index(self) -> dict[str, str]:
        """An index file that is never written, for git commands that read one they do
        not need (an index that does not exist is an empty one)."""
        return {"GIT_INDEX_FILE": os.fspath(self.kept) + ".none"}

    async def quick(self) -> str | None:
        """The tree of the files now, the quick way; None when it cannot say (a merge is
        under way, too many paths differ, or git failed)."""
        try:
            return await self._quick()
        except (GitError, OSError, ValueError):
            self._copied_from = None  # the kept index may be what failed: copy it again
            return None

    async def _quick(self) -> str | None:
        async with self._lock:
            await asyncio.to_thread(self._follow)
            base, top = await self._base_tree()
            out = await git(self.top, *STATUS, env=self._kept_env, locks=False)
        found = read_status(out)
        if found is None:
            return None
        changed, gone = (spare_copied(paths, self.copied) for paths in found)
        if len(changed) + len(gone) > MOST_PATHS:
            return None
        if not changed and not gone:
            return base
        folders = folders_of(changed + gone)
        async with conversation(self.top, "mktree", "-z", "--batch", "--missing") as mktree:
            staged, listing = await asyncio.gather(
                _stage(self.top, changed), self._listing(base, folders[:-1])
            )
            return await self._patch(mktree, {**listing, b"": top}, changed + gone, staged)

    def _follow(self) -> None:
        """Copy the agent's index again when it changed since the kept copy was made (its
        signature is read before the copy: a change during it shows next time)."""
        now = _signature(self.index)
        if now is not None and now == self._copied_from and self.kept.is_file():
            return
        self._base = None
        if now is None:  # no index yet: an empty one
            self.kept.unlink(missing_ok=True)
        else:
            fresh = self.kept.with_name(self.kept.name + ".new")
            fresh.unlink(missing_ok=True)  # never written through a link left there
            _copy(self.index, fresh)
            os.replace(fresh, self.kept)
        self._copied_from = now

    async def _base_tree(self) -> tuple[str, dict[bytes, Entry]]:
        """The tree of the kept index, and its top folder's entries. Kept until the index
        is copied again: git only refreshes the copy's stats, never its entries."""
        if self._base is None:
            tree = os.fsdecode(await git(self.top, "write-tree", env=self._kept_env)).strip()
            top = read_listing(await git(self.top, "ls-tree", "-z", tree)).get(b"", {})
            self._base = (tree, top)
        return self._base

    async def _listing(self, base: str, folders: list[bytes]) -> dict[bytes, dict[bytes, Entry]]:
        """The entries of these folders (never the top one) in the tree `base`."""
        if not folders:
            return {}
        below = [os.fsdecode(folder) + "/" for folder in folders]
        return read_listing(
            await git(self.top, "--literal-pathspecs", "ls-tree", "-z", base, "--", *below)
        )

    async def _patch(
        self,
        mktree: asyncio.subprocess.Process,
        listing: dict[bytes, dict[bytes, Entry]],
        paths: list[bytes],
        staged: dict[bytes, Entry],
    ) -> str:
        """The new trees of the folders that hold `paths`, a depth at a time, by one `git
        mktree` that names each tree as it is written (a folder's tree names its own)."""
        assert mktree.stdin is not None
        assert mktree.stdout is not None
        stdin, stdout = mktree.stdin, mktree.stdout

        async def name_trees(trees: list[dict[bytes, Entry]]) -> list[bytes]:
            stdin.write(b"".join(mktree_input(entries) for entries in trees))
            await stdin.drain()
            named = []
            async with asyncio.timeout(GIT_TIMEOUT):
                for _ in trees:
                    line = (await stdout.readline()).strip()
                    if not line:
                        raise GitError("`git mktree` stopped without naming a tree.")
                    named.append(line)
            return named

        root = await patch_trees(paths, listing, staged, name_trees)
        stdin.close()
        return os.fsdecode(root)


async def _stage(top: Path, paths: list[bytes]) -> dict[bytes, Entry]:
    """Git's own entries for `paths` as the files are now (a tiny index of them alone);
    a path that is gone by now has none."""
    if not paths:
        return {}
    async with scratch_index() as env:
        listed = b"".join(path + b"\0" for path in paths)
        await git(top, "update-index", "--add", "--remove", "-z", "--stdin", env=env, stdin=listed)
        return read_stage(await git(top, "ls-files", "--stage", "-z", env=env))


def _copy(index: Path | None, scratch: Path) -> None:
    """Seed an index with the agent's (its file stats spare git reading every file
    again); none yet (a new repository) leaves it empty. The copy keeps the index's own
    time: git reads a file again when its stat is no older than the index (an edit of the
    same size within that second), and a copy stamped now would hide such an edit."""
    if index is not None and index.is_file():
        shutil.copy2(index, scratch)


def _clear_stale_lock(kept: Path) -> None:
    """Remove a lock on the kept index that a killed git left (git would only skip
    refreshing it, so each checkpoint would walk more than it needs)."""
    lock = kept.with_name(kept.name + ".lock")
    with contextlib.suppress(FileNotFoundError):
        if time.time() - lock.stat().st_mtime > STALE_LOCK:
            lock.unlink()


def _signature(path: Path) -> Signature | None:
    """What tells one version of an index file from another: its stat and the checksum
    git ends it with. None when there is no such file."""
    try:
        with path.open("rb") as file:
            stat = os.fstat(file.fileno())
            file.seek(max(stat.st_size - 32, 0))
            trailer = file.read(32)
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, trailer)
