"""Deleting a worktree session, in process and through a service, in a real repository:
its worktree, the branch Cockpit made and Cockpit's refs go with it, so nothing is left
behind that no screen lists; a worktree holding work merged nowhere is refused, and
nothing is deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.api import WorktreeRequest, read_worktree
from tests.support.git_repos import git, make_repo
from tests.support.ui_service_helpers import Engines


async def test_a_delete_takes_the_worktree_its_branch_and_refs(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await engine.create_session("demo", repo, worktree=WorktreeRequest())
        made = read_worktree(record.info)
        assert made is not None
        git(repo, "update-ref", f"refs/cockpit/{record.id}/1", "HEAD")  # as a checkpoint
        (Path(made.path) / "notes.txt").write_text("unmerged\n")
        with pytest.raises(ValueError, match=r"merged nowhere \(1 uncommitted file\)"):
            await engine.delete(record.id)
        assert Path(made.path).is_dir() and await engine.session(record.id)
        (Path(made.path) / "notes.txt").unlink()
        await engine.delete(record.id)
        assert not Path(made.path).exists()
        assert git(repo, "branch", "--list", made.branch) == ""
        assert git(repo, "for-each-ref", f"refs/cockpit/{record.id}/") == ""
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        assert [r.id for r in await engine.sessions()] == []
        mine = await engine.create_session("demo", repo)  # no worktree: as before
        await engine.delete(mine.id)
        assert repo.is_dir()
    finally:
        await engine.close()
