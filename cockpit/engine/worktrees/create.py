"""Making a worktree session's worktree: a branch from the base the user picked (or the
existing branch they picked) checked out in a folder of Cockpit's, and, when asked, the
checkout's uncommitted changes copied in. What fails leaves nothing behind: no branch, no
folder, no half-copied change."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path

from cockpit.api import RepositoryInfo, WorktreeRequest
from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.git import GitError
from cockpit.engine.worktrees.naming import branch_name, ref_problem, worktree_path
from cockpit.records import Worktree


async def repository(cwd: Path) -> RepositoryInfo | None:
    """The repository `cwd` lies in (None: none, or git cannot run here)."""
    try:
        top = await top_of(cwd)
    except (GitError, ValueError):
        return None
    code, head, _ = await git.run(top, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    _, changes, _ = await git.run(top, "status", "--porcelain", "-z", locks=False)
    names = await git.text(top, "for-each-ref", "--format=%(refname:short)", "refs/heads")
    return RepositoryInfo(
        str(top),
        (os.fsdecode(head).strip() or None) if code == 0 else None,
        bool(changes),
        tuple(name for name in names.splitlines() if name),
    )


async def top_of(cwd: Path) -> Path:
    """The top folder of the checkout `cwd` lies in; ValueError when it lies in none
    (GitError when git cannot run)."""
    code, output, _ = await git.run(cwd, "rev-parse", "--show-toplevel", check=False, locks=False)
    top = os.fsdecode(output).strip()
    if code != 0 or not top:
        raise ValueError(f"{cwd} is not in a git repository: a worktree session needs one.")
    return Path(await asyncio.to_thread(os.path.realpath, top))


async def commit_of(top: Path, name: str) -> str:
    """The full sha `name` (a branch, "HEAD", a commit) stands for in `top`; ValueError
    when it names none."""
    code, output, _ = await git.run(
        top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}",
        check=False,
    )  # fmt: skip
    if code != 0:
        raise ValueError(f"There is no branch or commit {name!r} in {top}.")
    return os.fsdecode(output).strip()


async def make_worktree(
    cwd: Path,
    request: WorktreeRequest,
    *,
    folder: Path,
    prefix: str,
    title: str | None,
    session_id: str,
) -> Worktree:
    """Make the worktree of a new session `session_id`: what the session stores as its
    worktree. ValueError (or GitError) saying why when it cannot be made; then nothing is
    left of it."""
    top = await top_of(cwd)
    base_commit = await commit_of(top, request.base)
    path = worktree_path(folder, top, title, session_id)
    if request.branch is not None:
        if ref_problem(request.branch) or request.branch.startswith("refs/"):
            raise ValueError(f"{request.branch!r} is not a branch's name.")
        code, _, _ = await git.run(
            top, "show-ref", "--verify", "--quiet", f"refs/heads/{request.branch}", check=False
        )
        if code != 0:
            raise ValueError(f"There is no branch {request.branch!r} in {top}.")
        await refuse_checked_out(top, request.branch)
        branch, made = request.branch, False
        adding = ["worktree", "add", str(path), request.branch]
    else:
        branch, made = branch_name(title, session_id, prefix), True
        adding = ["worktree", "add", "-b", branch, str(path), base_commit]
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    await git.run(top, *adding)
    worktree = Worktree(
        str(top), str(path), branch, request.base, base_commit, await _on_branch(top, request)
    )
    if request.carry_changes:
        try:
            await carry_changes(top, path, request.branch or request.base)
        except BaseException:
            await remove_worktree(worktree, delete_branch=made)
            raise
    return worktree


async def refuse_checked_out(top: Path, branch: str) -> None:
    """Refuse (ValueError, in a sentence) a branch already checked out in the user's
    checkout or in another worktree: git checks a branch out in one place at a time, and
    its own words ("already checked out at") do not say what to do."""
    where = await checked_out_at(top, branch)
    if where is None:
        return
    if where == top:
        place = f"your checkout at {top}"
    elif await asyncio.to_thread(where.exists):
        place = f"another worktree, at {where}"
    else:
        place = f"a worktree deleted by hand (`git worktree prune` forgets it), at {where}"
    raise ValueError(
        f"The branch {branch!r} is already checked out in {place}, and git checks a branch"
        " out in one place only: switch that one to another branch, or start a new branch"
        f" from {branch!r} instead."
    )


async def checked_out_at(top: Path, branch: str) -> Path | None:
    """Where `branch` is checked out among the repository's worktrees (its main checkout
    included), or None."""
    listing = await git.text(top, "worktree", "list", "--porcelain")
    path: Path | None = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = Path(line.removeprefix("worktree "))
        elif line == f"branch refs/heads/{branch}" and path is not None:
            return Path(await asyncio.to_thread(os.path.realpath, path))
    return None


async def _on_branch(top: Path, request: WorktreeRequest) -> str | None:
    """The branch a session made from the checkout's HEAD came from (what its work merges
    back into), or None (another base, or a detached HEAD)."""
    if request.base != "HEAD":
        return None
    code, head, _ = await git.run(top, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    return (os.fsdecode(head).strip() or None) if code == 0 else None


async def carry_changes(top: Path, path: Path, base: str) -> None:
    """Copy the checkout's uncommitted changes (staged or not, against its HEAD) and its
    untracked files (not the ignored ones) into the worktree at `path`; the checkout keeps
    them. ValueError when they do not apply there (git applies all or nothing)."""
    _, diff, _ = await git.run(top, "diff", "--binary", "HEAD")
    if diff:
        code, _, said = await git.run(path, "apply", "--binary", input=diff, check=False)
        if code != 0:
            last = said.splitlines()[-1].removeprefix("error: ") if said else "git refused it"
            raise ValueError(
                f"Your uncommitted changes do not apply on {base}: {last}. No worktree was"
                " made: commit them, or start from the checkout's HEAD, or leave them behind."
            )
    _, others, _ = await git.run(top, "ls-files", "--others", "--exclude-standard", "-z")
    names = [os.fsdecode(name) for name in others.split(b"\0") if name]
    await asyncio.to_thread(_copy_files, top, path, names)


def _copy_files(source: Path, target: Path, names: list[str]) -> None:
    """Copy files (links as links) from one folder to the same places in another."""
    for name in names:
        into = target / name
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, into, follow_symlinks=False)


async def remove_worktree(worktree: Worktree, *, delete_branch: bool) -> None:
    """Take a worktree away (a session that could not be made): its folder, git's record
    of it, and its branch when Cockpit made it. Best effort: it is already failing."""
    with contextlib.suppress(GitError, OSError):
        await git.run(worktree.repo, "worktree", "remove", "--force", worktree.path, check=False)
    with contextlib.suppress(OSError):
        await asyncio.to_thread(shutil.rmtree, worktree.path, ignore_errors=True)
    with contextlib.suppress(GitError, OSError):
        await git.run(worktree.repo, "worktree", "prune", check=False)
    if delete_branch:
        with contextlib.suppress(GitError, OSError):
            await git.run(worktree.repo, "branch", "-D", "--", worktree.branch, check=False)
