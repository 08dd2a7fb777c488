"""Archiving a worktree session's worktree, and restoring it: the worktree goes, its branch
stays, and what was not committed is kept in Cockpit's data folder (owner-only) to be put
back. The patch is made with a scratch index, so the user's own index and files are never
touched; it holds the uncommitted changes and the untracked files (binary ones too). Ignored
files (`.env`...) are in no patch: the ignored files themselves are kept beside it, but not
ignored folders (build output, dependencies), which can be made again and may be huge."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.merged import plural
from cockpit.engine.worktrees.project import keep_out
from cockpit.paths import private_dir
from cockpit.records import ARCHIVED, Worktree, read_worktree_archive

ARCHIVES_NAME = "worktree-archives"
"""The folder in Cockpit's data folder that holds what archives kept, a folder per session
(refused to agents, as all of the data folder but the worktrees)."""

PATCH_NAME = "changes.patch"
"""The patch of the uncommitted work, in a session's archive folder."""

IGNORED_NAME = "ignored"
"""The folder of the kept ignored files, in a session's archive folder."""

IGNORED_FILE_LIMIT = 1_000_000
"""The largest ignored file kept (bytes): `.env` and local settings are small; a database
or a build product is not what an archive is for."""


@dataclass(frozen=True)
class Kept:
    """What an archive kept of a worktree."""

    patch: bool
    """Uncommitted changes or untracked files are in the patch."""
    ignored: tuple[str, ...]
    """The ignored files kept, by path in the worktree."""


async def save_work(worktree: Worktree, folder: Path) -> Kept:
    """Keep in `folder` (made owner-only) the worktree's uncommitted work: a patch against
    its HEAD, checked to apply there, and its ignored files. GitError or OSError when it
    cannot be kept: then nothing may be removed."""
    path = Path(worktree.path)
    await asyncio.to_thread(private_dir, folder)
    patch = await uncommitted_patch(path, folder, worktree.copied)
    if patch:
        await _check_applies(path, folder, patch)
        await asyncio.to_thread(_write_private, folder / PATCH_NAME, patch)
    ignored = await _ignored_files(path)  # and the files copied in, kept the same way
    names = [*ignored, *(name for name in worktree.copied if name not in ignored)]
    kept = await asyncio.to_thread(_keep_files, path, folder / IGNORED_NAME, names)
    return Kept(bool(patch), tuple(kept))


async def uncommitted_patch(path: Path, scratch: Path, copied: tuple[str, ...] = ()) -> bytes:
    """A binary patch of everything in the worktree at `path` that differs from its HEAD,
    untracked files included (ignored ones and those `copied` in not), made in a scratch
    index kept in `scratch` (a copy of the worktree's own, so unchanged files are not read
    again)."""
    index = scratch / "index.scratch"
    own = Path(os.fsdecode((await git.run(path, "rev-parse", "--git-path", "index"))[1]).strip())
    own = own if own.is_absolute() else path / own
    try:
        if await asyncio.to_thread(own.is_file):
            await asyncio.to_thread(shutil.copyfile, own, index)
        else:
            await git.run(path, "read-tree", "HEAD", env={"GIT_INDEX_FILE": str(index)})
        scratch_env = {"GIT_INDEX_FILE": str(index)}
        await git.run(path, "add", "--all", "--", *keep_out(copied), env=scratch_env)
        _, patch, _ = await git.run(
            path, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "HEAD",
            env=scratch_env,
        )  # fmt: skip
        return patch
    finally:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(index.unlink, missing_ok=True)


async def _check_applies(path: Path, scratch: Path, patch: bytes) -> None:
    """Make sure the patch puts the work back on the worktree's HEAD, in a scratch index
    (GitError when it would not: then the worktree stays)."""
    index = scratch / "index.check"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        await git.run(path, "read-tree", "HEAD", env=env)
        await git.run(path, "apply", "--cached", "--binary", "--check", input=patch, env=env)
    finally:
        with contextlib.suppress(OSError):
            await asyncio.to_thread(index.unlink, missing_ok=True)


async def _ignored_files(path: Path) -> list[str]:
    """The ignored files of the worktree that lie outside an ignored folder (those folders
    hold what a build or an install makes again)."""
    _, listed, _ = await git.run(
        path, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"
    )
    names = [os.fsdecode(name) for name in listed.split(b"\0") if name]
    return [name for name in names if not name.endswith("/")]


def _keep_files(source: Path, target: Path, names: list[str]) -> list[str]:
    """Copy the regular files among `names` (small enough) from `source` to `target`,
    owner-only; the names copied."""
    kept = []
    for name in names:
        origin = source / name
        try:
            status = origin.lstat()
        except OSError:
            continue
        if not origin.is_file() or origin.is_symlink() or status.st_size > IGNORED_FILE_LIMIT:
            continue
        into = target / name
        into.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _write_private(into, origin.read_bytes(), status.st_mode & 0o700)
        kept.append(name)
    return kept


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write a file only its owner may read."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode | 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


async def remove(worktree: Worktree) -> None:
    """Take the worktree away: its folder and git's record of it; the branch stays."""
    with contextlib.suppress(GitError):
        await git.run(worktree.repo, "worktree", "remove", "--force", worktree.path)
    await asyncio.to_thread(shutil.rmtree, worktree.path, ignore_errors=True)
    await git.run(worktree.repo, "worktree", "prune")


async def make_again(worktree: Worktree) -> None:
    """Check the branch out again where the worktree was (after a prune: git forgets a
    worktree deleted by hand). ValueError saying why when it cannot be."""
    path = Path(worktree.path)
    if await asyncio.to_thread(path.exists):
        raise ValueError(f"{path} is in the way: move it away, then restore again.")
    await git.run(worktree.repo, "worktree", "prune")
    code, _, _ = await git.run(
        worktree.repo, "show-ref", "--verify", "--quiet", f"refs/heads/{worktree.branch}",
        check=False,
    )  # fmt: skip
    if code != 0:
        raise ValueError(f"The branch {worktree.branch} is gone: there is nothing to restore.")
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    await git.run(worktree.repo, "worktree", "add", str(path), worktree.branch)


async def put_back(worktree: Worktree, folder: Path) -> Kept:
    """Put what an archive kept in `folder` back into the worktree: the patch (its staged
    changes come back unstaged) and the ignored files, which never replace a file there.
    ValueError when the patch does not apply (the archive stays)."""
    path = Path(worktree.path)
    patch_file = folder / PATCH_NAME
    patch = await asyncio.to_thread(patch_file.read_bytes) if patch_file.is_file() else b""
    if patch:
        code, _, said = await git.run(path, "apply", "--binary", input=patch, check=False)
        if code != 0:
            last = said.splitlines()[-1].removeprefix("error: ") if said else "git refused it"
            raise ValueError(
                f"The kept changes do not apply to {worktree.branch} any more: {last}. They"
                f" stay in {patch_file}."
            )
    ignored = folder / IGNORED_NAME
    names = await asyncio.to_thread(_files_under, ignored)
    await asyncio.to_thread(_copy_missing, ignored, path, names)
    return Kept(bool(patch), tuple(names))


def _files_under(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _copy_missing(source: Path, target: Path, names: list[str]) -> None:
    for name in names:
        into = target / name
        if into.exists() or into.is_symlink():
            continue
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, into)


def forget(folder: Path) -> None:
    """Delete what an archive kept (restored, or removed by a cleanup)."""
    shutil.rmtree(folder, ignore_errors=True)


def archived_words(session_id: str, worktree: Worktree, kept: Kept, stopped: list[str]) -> str:
    """What an archive did, in words."""
    parts = [f"Archived {session_id}: its worktree is removed, the branch {worktree.branch} stays"]
    if kept.patch:
        parts.append("the uncommitted changes and untracked files are kept")
    if kept.ignored:
        parts.append(f"{plural(len(kept.ignored), 'ignored file')} kept ({_names(kept.ignored)})")
    if stopped:
        parts.append(f"stopped {' and '.join(stopped)}")
    return "; ".join(parts) + f". `cockpit restore-worktree {session_id}` brings it back."


def restored_words(session_id: str, worktree: Worktree, kept: Kept) -> str:
    """What a restore did, in words."""
    parts = [f"Restored {session_id} at {worktree.path} on {worktree.branch}"]
    if kept.patch:
        parts.append("the uncommitted changes are back (none of them staged)")
    if kept.ignored:
        parts.append(f"{plural(len(kept.ignored), 'ignored file')} back ({_names(kept.ignored)})")
    return "; ".join(parts) + "."


def _names(names: tuple[str, ...], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def refusal_to_start(session_id: str, info: object) -> str:
    """Why a session whose worktree was taken away cannot run its agent or a command."""
    gone = read_worktree_archive(info)
    if gone is not None and gone.state == ARCHIVED:
        return (
            f"Session {session_id} is archived: restore its worktree first"
            f" (`cockpit restore-worktree {session_id}`, or Restore in the palette)."
        )
    return (
        f"The worktree of session {session_id} was removed by a cleanup: its transcript"
        " stays, but it has no folder to work in."
    )
