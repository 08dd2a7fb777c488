"""Real git repositories for the worktree tests: made with the `git` command in a test's
folder, with a commit or two, and read back the same way."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


def git(folder: Path, *args: str) -> str:
    """The output of `git ARGS` in `folder` (it must succeed)."""
    done = subprocess.run(
        ["git", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        env={**_environ(), **IDENTITY},
    )
    return done.stdout.strip()


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def make_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at `folder` on branch `main` with one commit of `files` (a README by
    default)."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "commit.gpgsign", "false")
    commit(folder, files or {"README.md": "# A project\n\nIt has a readme.\n"}, "first")
    return folder


def commit(folder: Path, files: dict[str, str], message: str) -> str:
    """Write `files` and commit them; the new commit's sha."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(folder, "add", "--", *files)
    git(folder, "commit", "-q", "-m", message)
    return git(folder, "rev-parse", "HEAD")
