"""Real git repositories for the tests of checkpoints: a repository with a commit, a
`.gitignore` that ignores `.env`, a worktree of it on a branch of its own, and the
session info that says a session works in that worktree."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from store.store import Store

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def git(folder: Path, *args: str) -> str:
    """The output of `git ARGS` in `folder` (it must succeed)."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=folder, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repository(folder: Path) -> Path:
    """A repository with `README.md`, `src/app.py`, a `.gitignore` of `.env` and one
    commit on `main`."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "README.md").write_text("# A project\n\nIt has a readme.\n")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("print('hello')\n")
    (folder / ".gitignore").write_text(".env\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "first")
    return folder


def make_worktree(repository: Path, path: Path, branch: str = "cockpit/test") -> dict[str, Any]:
    """A worktree of `repository` at `path` on a new branch, as a session's info says it."""
    git(repository, "worktree", "add", "-q", "-b", branch, str(path))
    base_commit = git(repository, "rev-parse", "HEAD").strip()
    return {
        "repo": str(repository.resolve()),
        "path": str(path.resolve()),
        "branch": branch,
        "base": "main",
        "base_commit": base_commit,
    }


async def mark_worktree(home: Path, session_id: str, worktree: dict[str, Any]) -> None:
    """Store in the session's info that it works in `worktree` (as the worktree sessions
    do), through the store file the engine reads (in this process or in the service)."""
    store = await Store.open(home / "cockpit.db")
    try:
        record = await store.get_session(session_id)
        assert record is not None
        await store.update_session(session_id, info={**(record.info or {}), "worktree": worktree})
    finally:
        await store.close()


def index_state(folder: Path) -> tuple[str, str, bytes, str]:
    """What a checkpoint must leave as it was: HEAD, the branch, the index file's bytes and
    what is staged."""
    index = Path(git(folder, "rev-parse", "--path-format=absolute", "--git-path", "index").strip())
    return (
        git(folder, "rev-parse", "HEAD"),
        git(folder, "symbolic-ref", "HEAD"),
        index.read_bytes(),
        git(folder, "diff", "--cached"),
    )
