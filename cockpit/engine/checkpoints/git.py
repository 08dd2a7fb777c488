"""Running `git` for the checkpoints: an argument list, never a shell, with an environment
of Cockpit's own so the user's `GIT_DIR` or `GIT_INDEX_FILE` never redirects it."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Cockpit",
    "GIT_AUTHOR_EMAIL": "cockpit@localhost",
    "GIT_COMMITTER_NAME": "Cockpit",
    "GIT_COMMITTER_EMAIL": "cockpit@localhost",
}
"""Who a checkpoint's commit says made it: it is never on a branch, and a repository whose
user has no `user.name` set must still get its checkpoints."""

_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX")


class GitError(RuntimeError):
    """A git command failed; the message is git's own last line."""


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without what would point git elsewhere, plus `extra`."""
    env = {name: value for name, value in os.environ.items() if name not in _REDIRECTS}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **IDENTITY})
    env.update(extra or {})
    return env


async def git(
    root: Path, *args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None
) -> bytes:
    """The output of `git ARGS` run in `root` (GitError when it fails or cannot start)."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=root,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=git_environment(env),
        )
    except OSError as error:
        raise GitError(f"git could not start: {error.strerror or error}") from error
    try:
        out, err = await process.communicate(stdin)
    except BaseException:  # cancelled: leave no git behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    if process.returncode != 0:
        said = err.decode("utf-8", "replace").strip().splitlines()
        raise GitError(said[-1] if said else f"git {args[0]} failed")
    return out
