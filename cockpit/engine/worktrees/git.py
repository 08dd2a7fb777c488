"""Running `git`: as a subprocess with its arguments (never a shell), without a terminal to
ask on, never pointed elsewhere by the user's `GIT_DIR` or `GIT_INDEX_FILE`, and with a
sentence the user can act on when git is missing, too old or fails. Every git command of
the engine (worktrees, checkpoints) runs here."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from cockpit.spawning import spawn

MIN_VERSION = (2, 25)
"""The oldest git worktree sessions are made and read with (2.25, January 2020): every
command they use has the options they use there."""

MERGE_TREE_VERSION = (2, 38)
"""The oldest git that merges in its object store alone (`git merge-tree --write-tree`,
2.38, October 2022): merging a worktree session's branch tests the merge with it first,
so only that needs it."""

GIT_TIMEOUT = 120.0
"""Seconds a git command may take: a worktree of a large repository takes a while."""

CLOSE_WAIT = 5.0
"""Seconds a git spoken to in turns has to finish once its input is closed."""


REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")
"""Variables of Cockpit's own environment that would send git to another repository or
index than the folder it runs in: never passed on (a caller sets them on purpose)."""


IDENTITY = {
    "GIT_AUTHOR_NAME": "Cockpit",
    "GIT_AUTHOR_EMAIL": "cockpit@localhost",
    "GIT_COMMITTER_NAME": "Cockpit",
    "GIT_COMMITTER_EMAIL": "cockpit@localhost",
}
"""Who the commits Cockpit makes for itself say made them (checkpoints, a squash check's
scratch commit): no branch holds them, and a user with no `user.name` set still gets
them."""


class GitError(RuntimeError):
    """Git is missing, too old, or a command of it failed; the message says which, in a
    sentence (git's own last words included)."""


_VERSION = re.compile(r"git version (\d+)\.(\d+)")
_checked: tuple[int, int] | None = None


def version_of(words: str) -> tuple[int, int] | None:
    """The major and minor version `git --version` printed, or None when it says none."""
    match = _VERSION.search(words)
    return (int(match.group(1)), int(match.group(2))) if match else None


def too_old(
    found: tuple[int, int],
    needed: tuple[int, int] = MIN_VERSION,
    what: str = "Worktree sessions need",
) -> str | None:
    """Why a git of version `found` cannot serve `what` needs `needed`, or None when it can."""
    if found >= needed:
        return None
    need = ".".join(map(str, needed))
    have = f"{found[0]}.{found[1]}"
    return f"{what} git {need} or newer; this machine has git {have}."


async def require(needed: tuple[int, int], what: str) -> None:
    """Refuse (GitError) when this machine's git is older than `needed`, which `what`
    needs ("Merging a worktree session's branch needs")."""
    await _check_version()
    assert _checked is not None
    problem = too_old(_checked, needed, what)
    if problem:
        raise GitError(problem)


async def run(
    cwd: Path | str,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    locks: bool = True,
    env: Mapping[str, str] | None = None,
) -> tuple[int, bytes, str]:
    """Run `git ARGS` in `cwd`: (exit code, output, error text). `check` turns a failure
    into a GitError naming the command and saying git's last line. Without `locks`, git
    takes no optional lock (a status read in the background must never make an agent's
    own `git` wait). `env` is set on top of Cockpit's environment (a scratch index)."""
    await _check_version()
    return await _run(cwd, args, input=input, check=check, locks=locks, env=env)


async def text(cwd: Path | str, *args: str, locks: bool = True) -> str:
    """The output of `git ARGS`, as text with its last newline removed (GitError when it
    fails)."""
    _, output, _ = await run(cwd, *args, locks=locks)
    return os.fsdecode(output).removesuffix("\n")


async def _check_version() -> None:
    global _checked
    if _checked is not None:
        return
    _, output, _ = await _run(".", ("--version",), input=None, check=True, locks=True, env=None)
    found = version_of(os.fsdecode(output))
    if found is None:
        raise GitError(f"Cockpit cannot tell the version of this git: {os.fsdecode(output)!r}.")
    problem = too_old(found)
    if problem:
        raise GitError(problem)
    _checked = found


async def _run(
    cwd: Path | str,
    args: tuple[str, ...],
    *,
    input: bytes | None,
    check: bool,
    locks: bool,
    env: Mapping[str, str] | None,
) -> tuple[int, bytes, str]:
    process = await _spawn(cwd, args, locks=locks, env=env, stdin=input is not None)
    try:
        async with asyncio.timeout(GIT_TIMEOUT):
            output, errors = await process.communicate(input)
    except BaseException:  # cancelled or timed out: leave no git behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    said = os.fsdecode(errors).strip()
    code = process.returncode or 0
    if check and code != 0:
        last = said.splitlines()[-1] if said else f"it exited with {code}"
        raise GitError(f"`git {' '.join(args[:2])}` failed: {last.removeprefix('fatal: ')}")
    return code, output, said


@contextlib.asynccontextmanager
async def conversation(
    cwd: Path | str, *args: str, env: Mapping[str, str] | None = None
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`git ARGS` running, to write to and read from in turns (`mktree --batch` answers
    each tree as it is written). When the block ends its input is closed and what is left
    of its output read (for CLOSE_WAIT at most), so its pipes close while the loop runs;
    when the block fails, or git takes longer, it is killed."""
    await _check_version()
    process = await _spawn(cwd, args, locks=True, env=env, stdin=True)
    failed = True
    try:
        yield process
        failed = False
    finally:
        if failed:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await process.communicate()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()


async def _spawn(
    cwd: Path | str,
    args: tuple[str, ...],
    *,
    locks: bool,
    env: Mapping[str, str] | None,
    stdin: bool,
) -> asyncio.subprocess.Process:
    variables = {k: v for k, v in os.environ.items() if k not in REDIRECTS}
    variables.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})})
    if not locks:
        variables["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        return await spawn(
            "git",
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=variables,
        )
    except FileNotFoundError as error:
        if not await asyncio.to_thread(Path(cwd).is_dir):
            raise GitError(f"{cwd} is not a folder.") from error
        raise GitError(
            "Worktree sessions need git, and no `git` command was found on this machine:"
            " install git and try again."
        ) from error
