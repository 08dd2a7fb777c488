"""A checkpoint per turn through the contract, in process and through a real service: a
turn of the demo agent in a worktree session gets a checkpoint as it starts and as it ends,
its changes are exactly its edit, an edit made by hand between turns shows as changed
outside a turn, and the files go back (refused while a turn runs) in a way that can be
undone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cockpit.api import EngineAPI, Status
from tests.support.checkpoint_repos import (
    git,
    index_state,
    make_repository,
    make_worktree,
    mark_worktree,
)
from tests.support.ui_service_helpers import Engines
from tests.support.waiting import eventually

NOTES = "demo-notes.md"


@pytest.fixture
async def engine(engines: Engines) -> AsyncIterator[EngineAPI]:
    opened: EngineAPI = await engines.factory()()
    yield opened
    await opened.close()


async def worktree_session(engine: EngineAPI, engines: Engines, tmp_path: Path) -> str:
    """A demo session whose folder is a worktree of a real repository, as its info says."""
    repository = make_repository(tmp_path / "repo")
    worktree = make_worktree(repository, engines.project)
    record = await engine.create_session("demo", engines.project)
    await mark_worktree(engines.home, record.id, worktree)
    return record.id


async def test_a_turn_gets_its_checkpoints_and_shows_exactly_its_edit(
    engine: EngineAPI, engines: Engines, tmp_path: Path
) -> None:
    session = await worktree_session(engine, engines, tmp_path)
    before = index_state(engines.project)
    engine.allow_automatically(session)
    assert await engine.prompt(session, "tools") == "end_turn"
    checkpoints = await engine.checkpoints(session)
    assert [(c.id, c.turn, c.phase) for c in checkpoints] == [("1", 1, "start"), ("2", 1, "end")]
    assert checkpoints[1].changed == 1
    changes = await engine.turn_changes(session, 1)
    assert [(c.path, c.status, c.outside) for c in changes] == [(NOTES, "added", False)]
    assert changes[0].new_text == (engines.project / NOTES).read_text()
    assert index_state(engines.project) == before

    (engines.project / "README.md").write_text("edited by hand between turns\n")
    assert await engine.prompt(session, "hello") == "end_turn"
    second = await engine.turn_changes(session, 2)
    assert [(c.path, c.status, c.outside) for c in second] == [("README.md", "modified", True)]
    assert second[0].new_text == "edited by hand between turns\n"


async def test_a_restore_lists_what_it_does_keeps_env_and_can_be_undone(
    engine: EngineAPI, engines: Engines, tmp_path: Path
) -> None:
    session = await worktree_session(engine, engines, tmp_path)
    engine.allow_automatically(session)
    (engines.project / ".env").write_text("SECRET=1\n")
    assert await engine.prompt(session, "tools") == "end_turn"
    notes = (engines.project / NOTES).read_text()
    (engines.project / "README.md").write_text("edited by hand\n")

    plan = await engine.restore_preview(session, "1")
    assert (plan.overwrite, plan.create, plan.delete, plan.refusal) == (
        ("README.md",), (), (NOTES,), None,
    )  # fmt: skip
    made = await engine.restore(session, "1")
    assert not (engines.project / NOTES).exists()
    assert (engines.project / "README.md").read_text() == "# A project\n\nIt has a readme.\n"
    assert (engines.project / ".env").read_text() == "SECRET=1\n"
    assert git(engines.project, "status", "--porcelain") == ""
    rows = await engine.rows(session)
    assert f"Restore checkpoint {made} to undo this." in rows[-1].text

    await engine.restore(session, made)
    assert (engines.project / NOTES).read_text() == notes
    assert (engines.project / "README.md").read_text() == "edited by hand\n"
    assert (engines.project / ".env").read_text() == "SECRET=1\n"


async def test_a_restore_is_refused_while_a_turn_runs(
    engine: EngineAPI, engines: Engines, tmp_path: Path
) -> None:
    session = await worktree_session(engine, engines, tmp_path)
    engine.send(session, "tools")  # its edit waits for the user's answer: the turn runs

    async def asking() -> bool:
        return engine.first_pending(session) is not None

    await eventually(asking, 20, "the agent to ask")
    plan = await engine.restore_preview(session, "1")
    assert plan.refusal is not None and "A turn is running" in plan.refusal
    with pytest.raises(ValueError, match="A turn is running"):
        await engine.restore(session, "1")
    request = engine.first_pending(session)
    assert request is not None
    await engine.answer_permission(request.id, None)
    await eventually(lambda: engine.status(session) == Status.READY, 20, "the turn to end")
    assert [c.phase for c in await engine.checkpoints(session)] == ["start", "end"]


async def test_a_session_without_a_worktree_has_no_checkpoints(
    engine: EngineAPI, engines: Engines
) -> None:
    engines.project.mkdir()
    record = await engine.create_session("demo", engines.project)
    assert await engine.prompt(record.id, "hello") == "end_turn"
    assert await engine.checkpoints(record.id) == []
    with pytest.raises(ValueError, match="no worktree of its own"):
        await engine.restore(record.id, "1")


async def test_a_restore_is_refused_while_the_users_command_runs(
    engine: EngineAPI, engines: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")
    session = await worktree_session(engine, engines, tmp_path)
    assert await engine.prompt(session, "hello") == "end_turn"
    await engine.run_shell(session, "sleep 30")
    plan = await engine.restore_preview(session, "1")
    assert plan.refusal is not None and "Your command is still running" in plan.refusal
    with pytest.raises(ValueError, match="Your command is still running"):
        await engine.restore(session, "1")
    assert await engine.stop_shell(session)


async def test_a_checkpoint_that_fails_is_a_notice_and_the_turn_goes_on(
    engine: EngineAPI, engines: Engines, tmp_path: Path
) -> None:
    engines.project.mkdir()
    record = await engine.create_session("demo", engines.project)
    not_a_repository = tmp_path / "plain"
    not_a_repository.mkdir()
    worktree = {"repo": str(not_a_repository), "path": str(not_a_repository), "branch": "b",
                "base": "main", "base_commit": "0" * 40}  # fmt: skip
    await mark_worktree(engines.home, record.id, worktree)
    assert await engine.prompt(record.id, "hello") == "end_turn"
    notices = [row.text for row in await engine.rows(record.id) if row.kind == "notice"]
    assert any("could not checkpoint the files at the start" in text for text in notices)
    assert any("could not checkpoint the files at the end" in text for text in notices)
    assert any(row.kind == "agent" for row in await engine.rows(record.id))
