"""Worktree sessions against real git repositories and real agents, in the engine's own
process and through a service: the demo agent's edit lands in the session's worktree and
never in the user's checkout; a session on an existing branch; uncommitted changes carried
in (or refused whole when they do not apply); a folder in no repository works as before;
the status and the listing; and Cockpit's own files stay refused to an agent whose
worktree lies in Cockpit's data folder."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, EngineAPI, WorktreeRequest, read_worktree
from tests.engine.test_engine_restart import TINY
from tests.support.git_repos import commit, git, make_repo
from tests.support.ui_service_helpers import Engines

TINY_SPEC = AgentSpec(name="tiny", command=(sys.executable, TINY))


async def test_the_demo_agents_edit_lands_in_the_worktree_not_the_checkout(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        info = await engine.repository(str(repo / "."))
        assert info is not None and info.top == str(repo) and info.branch == "main"
        assert not info.dirty and info.branches == ("main",)
        record = await engine.create_session(
            "demo", repo, "Write notes", worktree=WorktreeRequest()
        )
        worktree = read_worktree(record.info)
        assert worktree is not None
        assert record.cwd == worktree.path
        assert Path(worktree.path).parent.parent == engines.home / "worktrees"
        assert worktree.branch == f"cockpit/write-notes-{record.id}"
        assert (worktree.repo, worktree.base) == (str(repo), "HEAD")
        assert worktree.base_commit == git(repo, "rev-parse", "HEAD")
        engine.allow_automatically(record.id)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        assert (Path(worktree.path) / "demo-notes.md").exists()
        assert not (repo / "demo-notes.md").exists()
        assert git(repo, "status", "--porcelain") == ""
        status = await engine.worktree_status(record.id)
        assert status is not None
        assert (status.branch, status.changed, status.ahead, status.behind) == (
            worktree.branch, 1, 0, 0,
        )  # fmt: skip
        commit(Path(worktree.path), {"more.txt": "x\n"}, "agent's work")
        status = await engine.worktree_status(record.id)
        assert status is not None and (status.changed, status.ahead) == (1, 1)
        (listed,) = await engine.worktrees()
        assert (listed.session, listed.path, listed.branch) == (
            record.id, worktree.path, worktree.branch,
        )  # fmt: skip
        assert listed.size > 0 and not listed.status.missing
        plain = await engine.create_session("demo", repo)
        assert read_worktree(plain.info) is None and plain.cwd == str(repo)
        assert await engine.worktree_status(plain.id) is None
        await engine.stop(record.id)
        shutil.rmtree(worktree.path)  # deleted by hand
        (gone,) = await engine.worktrees()
        assert gone.status.missing and gone.size == 0
    finally:
        await engine.close()


async def test_a_session_on_an_existing_branch(engines: Engines, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    engine = await engines.factory()()
    try:
        record = await engine.create_session(
            "demo", repo, worktree=WorktreeRequest(branch="feature")
        )
        worktree = read_worktree(record.info)
        assert worktree is not None and worktree.branch == "feature"
        assert git(Path(worktree.path), "branch", "--show-current") == "feature"
        with pytest.raises(ValueError, match="'nothing'"):
            await engine.create_session("demo", repo, worktree=WorktreeRequest(branch="nothing"))
        with pytest.raises(ValueError, match="main"):  # checked out in the user's checkout
            await engine.create_session("demo", repo, worktree=WorktreeRequest(branch="main"))
        assert len(await engine.sessions()) == 1
    finally:
        await engine.close()


async def test_a_branch_checked_out_elsewhere_is_refused_in_one_sentence(
    engines: Engines, tmp_path: Path
) -> None:
    """git checks a branch out in one place at a time: a session on the branch of the
    user's checkout, or on the branch of another session's worktree, is refused with a
    sentence saying where it is checked out and what to do; nothing is left behind."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    engine = await engines.factory()()
    try:
        with pytest.raises(ValueError, match="in your checkout") as refused:
            await engine.create_session("demo", repo, worktree=WorktreeRequest(branch="main"))
        assert str(refused.value) == (
            f"The branch 'main' is already checked out in your checkout at {repo}, and git"
            " checks a branch out in one place only: switch that one to another branch, or"
            " start a new branch from 'main' instead."
        )
        assert await engine.sessions() == []
        assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
        assert git(repo, "branch", "--format=%(refname:short)").split() == ["feature", "main"]
        assert not (engines.home / "worktrees").exists() or not any(
            (engines.home / "worktrees").rglob("*")
        )
        first = await engine.create_session(
            "demo", repo, worktree=WorktreeRequest(branch="feature")
        )
        elsewhere = r"^The branch 'feature' is already checked out in another worktree, at "
        with pytest.raises(ValueError, match=elsewhere):
            await engine.create_session("demo", repo, worktree=WorktreeRequest(branch="feature"))
        assert [record.id for record in await engine.sessions()] == [first.id]
    finally:
        await engine.close()


async def test_uncommitted_changes_are_carried_in_and_kept(
    engines: Engines, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.txt": "two\n"})
    git(repo, "checkout", "-q", "-b", "other")
    commit(repo, {"a.txt": "elsewhere\n"}, "a differs")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("one, edited\n")
    (repo / "b.txt").write_text("two, staged\n")
    git(repo, "add", "b.txt")
    (repo / "new" / "c.txt").parent.mkdir()
    (repo / "new" / "c.txt").write_text("untracked\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "ignored.log").write_text("ignored\n")
    engine = await engines.factory()()
    try:
        info = await engine.repository(str(repo))
        assert info is not None and info.dirty and set(info.branches) == {"main", "other"}
        record = await engine.create_session(
            "demo", repo, worktree=WorktreeRequest(carry_changes=True)
        )
        path = Path(record.cwd)
        assert (path / "a.txt").read_text() == "one, edited\n"
        assert (path / "b.txt").read_text() == "two, staged\n"
        assert (path / "new" / "c.txt").read_text() == "untracked\n"
        assert (path / ".gitignore").exists() and not (path / "ignored.log").exists()
        assert (repo / "a.txt").read_text() == "one, edited\n"  # the checkout keeps them
        left = await engine.create_session("demo", repo, worktree=WorktreeRequest())
        assert (Path(left.cwd) / "a.txt").read_text() == "one\n"  # not asked: not carried
        before = git(repo, "branch", "--list")
        with pytest.raises(ValueError, match="do not apply on other"):
            await engine.create_session(
                "demo", repo, "clash", worktree=WorktreeRequest("other", carry_changes=True)
            )
        assert git(repo, "branch", "--list") == before  # no branch, no folder, no session
        assert len(list((engines.home / "worktrees" / "repo").iterdir())) == 2
        assert len(await engine.sessions()) == 2
    finally:
        await engine.close()


async def test_a_folder_in_no_repository_works_as_before(engines: Engines, tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    engine = await engines.factory()()
    try:
        assert await engine.repository(str(folder)) is None
        assert await engine.repository(str(tmp_path / "nowhere")) is None
        with pytest.raises(ValueError, match="not in a git repository"):
            await engine.create_session("demo", folder, worktree=WorktreeRequest())
        assert await engine.sessions() == []
        record = await engine.create_session("demo", folder)
        engine.allow_automatically(record.id)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        assert (folder / "demo-notes.md").exists() and record.cwd == str(folder)
        assert await engine.worktrees() == []
    finally:
        await engine.close()


async def prompted(engine: EngineAPI, session: str, word: str) -> str:
    assert await asyncio.wait_for(engine.prompt(session, word), 20) == "end_turn"
    rows = await engine.rows(session)
    return rows[-1].text


async def test_an_agent_in_a_worktree_cannot_read_cockpits_store(
    engines: Engines, tmp_path: Path
) -> None:
    """The worktree lies in Cockpit's data folder: it is the agent's, the rest is not."""
    repo = make_repo(tmp_path / "repo")
    engine = await engines.factory()()
    try:
        record = await engine.create_session(TINY_SPEC, repo, worktree=WorktreeRequest())
        home = engines.home
        assert Path(record.cwd).is_relative_to(home)
        assert await prompted(engine, record.id, "read=README.md") == "read 30 characters"
        assert await prompted(engine, record.id, "write=notes.txt") == "wrote"
        assert (Path(record.cwd) / "notes.txt").read_text() == "tiny"
        for path in ("../../../cockpit.db", str(home / "cockpit.db")):
            assert await prompted(engine, record.id, f"read={path}") == (
                "read failed: Invalid params"
            )
        assert await prompted(engine, record.id, "write=../../../cockpit.db") == (
            "write failed: Invalid params"
        )
        # Nor approve its repository's commands for the user.
        assert await prompted(engine, record.id, "write=../../../approved-commands.json") == (
            "write failed: Invalid params"
        )
        assert not (home / "approved-commands.json").exists()
        refused = [r.text for r in await engine.rows(record.id) if "Refused" in r.text]
        assert len(refused) == 4
    finally:
        await engine.close()
