"""Running `git` for the checkpoints: the engine's one runner (`cockpit.engine.worktrees.git`),
with an author of Cockpit's own for the commits no branch holds."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cockpit.engine.worktrees.git import IDENTITY, GitError, run

__all__ = ["IDENTITY", "GitError", "git"]


async def git(
    root: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    locks: bool = True,
) -> bytes:
    """The output of `git ARGS` run in `root` (GitError when it fails or cannot start);
    without `locks`, git takes no optional lock."""
    environment = {**IDENTITY, **(env or {})}
    _, output, _ = await run(root, *args, input=stdin, env=environment, locks=locks)
    return output
