"""A session's checkpoints in its git work tree: made, listed, compared and put back.

A checkpoint is the work tree's files as one commit under `refs/cockpit/<session>/<n>`:
the tree of the files now (`reading`: only what `git status` says changed gets a new
entry), `commit-tree` on the previous checkpoint (or HEAD), `update-ref`. The agent's
index, HEAD and branch are never touched, and ignored files never go in. The refs and
their commits are the only record of them: nothing else can disagree with git.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

from cockpit.api import Checkpoint, FileChange, RestorePlan
from cockpit.engine.checkpoints.git import GitError, git
from cockpit.engine.checkpoints.reading import TreeReader, scratch_index
from cockpit.engine.checkpoints.rules import (
    FOR_EACH_REF_FORMAT,
    STATUS,
    DiffEntry,
    checkpoint_message,
    find_checkpoint,
    read_checkpoints,
    read_raw_diff,
    ref_name,
    ref_prefix,
    restore_plan,
    turn_bounds,
)

TEXT_BOUND = 256 * 1024
"""The largest file whose texts a change carries (bytes): a bigger one is listed only."""

NO_BLOB = "0" * 40


class Checkpoints:
    """The checkpoints of one session, in the git work tree at `root`."""

    def __init__(self, session: str, root: Path, copied: tuple[str, ...] = ()) -> None:
        self.session = session
        self.root = root
        self.copied = copied
        """The files copied in from the user's checkout (`.env`...): never checkpointed, so
        no restore overwrites or deletes them."""
        self.lock = asyncio.Lock()
        """Held while a checkpoint is made or the files are put back: one at a time."""
        self._top: Path | None = None
        self._reader: TreeReader | None = None
        self._latest: Checkpoint | None = None
        self._listed = False

    # -- where --------------------------------------------------------------------------------

    async def _locate(self) -> Path:
        """The work tree's top folder, and (kept) the reader of its files' tree."""
        if self._top is None:
            if not await asyncio.to_thread(self.root.is_dir):
                raise GitError(f"the folder {self.root} is gone")
            kept = f"cockpit-{re.sub(r'[^A-Za-z0-9_-]', '_', self.session)}.index"
            out = await git(
                self.root, "rev-parse", "--show-toplevel", "--git-path", "index", "--git-path", kept
            )
            top, index, kept_path = os.fsdecode(out).splitlines()[:3]
            self._top = Path(top)
            self._reader = TreeReader(
                self._top, self.root / index, self.root / kept_path, self.copied
            )
        return self._top

    # -- making one ---------------------------------------------------------------------------

    async def tree_now(self) -> str:
        """The tree of the files as they are now: tracked and untracked, never ignored."""
        await self._locate()
        assert self._reader is not None
        return await self._reader.read()

    async def settled(self) -> None:
        """Wait for the work a checkpoint left running in the background."""
        if self._reader is not None:
            await self._reader.settled()

    async def take(self, turn: int, phase: str) -> Checkpoint:
        """Checkpoint the files as they are now, at `phase` of `turn`."""
        async with self.lock:
            return await self._take(turn, phase)

    async def _take(self, turn: int, phase: str) -> Checkpoint:
        top = await self._locate()
        tree = await self.tree_now()
        previous = await self.latest()
        parent = previous.commit if previous is not None else await self._head(top)
        assert self._reader is not None
        changed = await _count(top, parent, tree, self._reader.no_index)
        now = round(time.time(), 3)  # as the message keeps it
        number = int(previous.id) + 1 if previous is not None else 1
        message = checkpoint_message(turn, phase, now, changed)
        parents = ["-p", parent] if parent else []
        commit = os.fsdecode(await git(top, "commit-tree", tree, *parents, "-m", message)).strip()
        try:  # an empty old value: the ref must not exist yet
            await git(top, "update-ref", ref_name(self.session, number), commit, "")
        except GitError:
            self._listed = False  # another Cockpit made one: read them again next time
            raise
        self._latest = Checkpoint(str(number), turn, phase, commit, now, changed)
        assert self._reader is not None
        self._reader.refresh_soon()
        return self._latest

    @staticmethod
    async def _head(top: Path) -> str | None:
        try:
            return os.fsdecode(await git(top, "rev-parse", "--verify", "-q", "HEAD")).strip()
        except GitError:  # a repository with no commit yet
            return None

    # -- reading them -------------------------------------------------------------------------

    async def read_all(self) -> list[Checkpoint]:
        """Every checkpoint of the session, in the order they were made."""
        top = await self._locate()
        out = await git(
            top, "for-each-ref", f"--format={FOR_EACH_REF_FORMAT}", ref_prefix(self.session)
        )
        found = read_checkpoints(out, self.session)
        self._latest, self._listed = (found[-1] if found else None), True
        return found

    async def latest(self) -> Checkpoint | None:
        """The newest checkpoint (read from git once, then kept)."""
        if not self._listed:
            await self.read_all()
        return self._latest

    async def changes(self, turn: int) -> list[FileChange]:
        """What changed between the previous turn's end and this turn's start (`outside`
        a turn), then what the turn itself changed (up to now while it runs)."""
        top = await self._locate()
        bounds = turn_bounds(await self.read_all(), turn)
        if bounds.start is None:
            raise KeyError(f"Turn {turn} has no checkpoint in this session.")
        end = bounds.end.commit if bounds.end is not None else await self.tree_now()
        changes: list[FileChange] = []
        if bounds.before is not None:
            changes += await self._changes(top, bounds.before.commit, bounds.start.commit, True)
        changes += await self._changes(top, bounds.start.commit, end, False)
        return changes

    async def _changes(self, top: Path, old: str, new: str, outside: bool) -> list[FileChange]:
        entries = read_raw_diff(await git(top, "diff-tree", "-r", "-z", "--no-renames", old, new))
        texts = await _texts(top, entries)
        return [
            FileChange(
                entry.path,
                STATUS.get(entry.status, "modified"),
                texts.get(entry.old_blob),
                texts.get(entry.new_blob),
                readable=all(blob in texts for blob in _blobs(entry)),
                outside=outside,
            )
            for entry in entries
        ]

    # -- putting files back -------------------------------------------------------------------

    async def plan(self, name: str, refusal: str | None = None) -> RestorePlan:
        """What restoring checkpoint `name` would do now (nothing is changed)."""
        top = await self._locate()
        target = find_checkpoint(await self.read_all(), name)
        tree = await self.tree_now()
        return await self._plan(top, tree, target, refusal)

    async def _plan(
        self, top: Path, now: str, target: Checkpoint, refusal: str | None
    ) -> RestorePlan:
        diff = await git(top, "diff-tree", "-r", "-z", "--no-renames", now, target.commit)
        return restore_plan(
            target.id, read_raw_diff(diff), lambda path: os.path.lexists(top / path), refusal
        )

    async def restore(
        self, name: str, refused: Callable[[], str | None]
    ) -> tuple[Checkpoint, RestorePlan]:
        """Put the working files back as checkpoint `name` holds them, after checkpointing
        them as they are (returned, with what was done). ValueError with `refused()`'s
        sentence when it says no; only working files change, never an ignored one."""
        async with self.lock:
            refusal = refused()
            if refusal is not None:
                raise ValueError(refusal)
            top = await self._locate()
            checkpoints = await self.read_all()
            target = find_checkpoint(checkpoints, name)
            turn = checkpoints[-1].turn if checkpoints else 0
            made = await self._take(turn, "restore")
            plan = await self._plan(top, made.commit, target, None)
            await asyncio.to_thread(_delete, top, plan.delete)
            await self._write(top, target.commit, plan.overwrite + plan.create)
            return made, plan

    async def _write(self, top: Path, commit: str, paths: tuple[str, ...]) -> None:
        """Write `paths` as `commit` holds them, through a scratch index of its own."""
        if not paths:
            return
        async with scratch_index() as env:
            await git(top, "read-tree", commit, env=env)
            listed = b"".join(os.fsencode(path) + b"\0" for path in paths)
            await git(top, "checkout-index", "-f", "-z", "--stdin", env=env, stdin=listed)


async def _count(top: Path, parent: str | None, tree: str, no_index: dict[str, str]) -> int:
    """How many files differ between the commit `parent` and `tree` (all of them without
    a parent). Git reads the index for `diff-tree` though it needs none: `no_index`
    spares it reading the agent's, which takes longer than the diff."""
    if parent is None:
        out = await git(top, "ls-tree", "-r", "-z", "--name-only", tree)
    else:
        out = await git(top, "diff-tree", "-r", "-z", "--name-only", parent, tree, env=no_index)
    return sum(1 for path in out.split(b"\0") if path)


def _blobs(entry: DiffEntry) -> Iterator[str]:
    if entry.old_blob != NO_BLOB:
        yield entry.old_blob
    if entry.new_blob != NO_BLOB:
        yield entry.new_blob


async def _texts(top: Path, entries: list[DiffEntry]) -> dict[str, str]:
    """The texts of the blobs of these entries that are text under `TEXT_BOUND`."""
    wanted = sorted({blob for entry in entries if "160000" not in (entry.old_mode, entry.new_mode)
                     for blob in _blobs(entry)})  # fmt: skip
    if not wanted:
        return {}
    listed = "".join(f"{blob}\n" for blob in wanted).encode()
    sizes = await git(top, "cat-file", "--batch-check", stdin=listed)
    small = []
    for line in sizes.decode("ascii", "replace").splitlines():
        blob, kind, size = ([*line.split(), "", ""])[:3]
        if kind == "blob" and size.isdigit() and int(size) <= TEXT_BOUND:
            small.append(blob)
    if not small:
        return {}
    out = await git(top, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in small).encode())
    texts: dict[str, str] = {}
    at = 0
    while at < len(out):
        header_end = out.index(b"\n", at)
        blob, _, size = out[at:header_end].decode("ascii").split()
        start = header_end + 1
        data = out[start : start + int(size)]
        at = start + int(size) + 1
        if b"\0" not in data:
            with suppress(UnicodeDecodeError):
                texts[blob] = data.decode("utf-8")
    return texts


def _delete(top: Path, paths: tuple[str, ...]) -> None:
    """Remove these files (never a folder), and the folders they leave empty."""
    for relative in paths:
        parts = Path(relative).parts
        if Path(relative).is_absolute() or ".." in parts:
            continue
        path = top / relative
        if path.is_symlink() or path.is_file():
            path.unlink()
        folder = path.parent
        while folder != top:
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
