"""`cockpit checkpoints` and `cockpit restore`, through the service and with `--local`: the
list, the plan shown before anything changes, no restore without a yes, the restore and
its undo, and a checkpoint that is none said in one line."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cockpit.cli.exits import EXIT_OK, EXIT_USAGE
from cockpit.engine.checkpoints import Checkpoints
from tests.support.checkpoint_repos import make_repository, make_worktree, mark_worktree
from tests.support.cli_modes import MODES, run_in

README = "# A project\n\nIt has a readme.\n"


@pytest.mark.parametrize("mode", MODES)
def test_checkpoints_are_listed_and_a_restore_asks_shows_and_can_be_undone(
    mode: str, cli_home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    worktree = make_worktree(make_repository(tmp_path / "repo"), project)
    assert run_in(mode, cli_home, "run", "--cwd", str(project), "hello").returncode == EXIT_OK
    (session,) = [s["id"] for s in json.loads(run_in(mode, cli_home, "ls", "--json").stdout)]
    asyncio.run(mark_worktree(cli_home, session, worktree))

    async def a_turn() -> None:  # as a turn in that session makes them
        book = Checkpoints(session, project)
        await book.take(1, "start")
        (project / "README.md").write_text("edited by the turn\n")
        (project / "notes.md").write_text("new\n")
        await book.take(1, "end")

    asyncio.run(a_turn())
    listed = run_in(mode, cli_home, "checkpoints", session[:8])
    assert listed.returncode == EXIT_OK, listed.stderr
    lines = listed.stdout.splitlines()
    assert "turn 1 start" in lines[0] and "0 files changed outside a turn" in lines[0]
    assert "turn 1 end" in lines[1] and "2 files changed by the turn" in lines[1]
    as_json = json.loads(run_in(mode, cli_home, "checkpoints", session, "--json").stdout)
    assert [(c["id"], c["phase"], c["changed"]) for c in as_json] == [
        ("1", "start", 0), ("2", "end", 2),
    ]  # fmt: skip

    asked = run_in(mode, cli_home, "restore", session, "1")  # no answer on its input
    assert asked.returncode == EXIT_OK, asked.stderr
    assert "overwrite: README.md" in asked.stdout and "delete: notes.md" in asked.stdout
    assert "Not restored" in asked.stdout
    assert (project / "README.md").read_text() == "edited by the turn\n"

    done = run_in(mode, cli_home, "restore", session, "1", "--yes")
    assert done.returncode == EXIT_OK, done.stderr
    assert (project / "README.md").read_text() == README
    assert not (project / "notes.md").exists()
    undo = done.stdout.splitlines()[-1]
    assert undo == f"Restored checkpoint 1. To undo: cockpit restore {session} 3"

    assert run_in(mode, cli_home, "restore", session, "3", "--yes").returncode == EXIT_OK
    assert (project / "notes.md").read_text() == "new\n"

    missing = run_in(mode, cli_home, "restore", session, "99", "--yes")
    assert missing.returncode == EXIT_USAGE
    assert missing.stderr.strip() == (
        "cockpit: No checkpoint '99' in this session: give its number (1-4) or the start "
        "of its commit."
    )
