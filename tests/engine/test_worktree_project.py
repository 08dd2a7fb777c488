"""What a repository's `.cockpit.toml` asks of its worktree sessions, in process and through
a service, against real git repositories: the files it lists copied in (never one that
leads out of the repository, never staged by a checkpoint or a commit, kept by a restore),
the setup command run only once its exact text is approved (a changed one asks again),
read at the base from the user's checkout, and the session's free ports."""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.api import (
    EngineAPI,
    Row,
    ShellRun,
    WorktreeRequest,
    read_shell_run,
    read_worktree,
)
from cockpit.engine.worktrees.readying import SUBMODULES
from tests.support.git_repos import commit, git, make_repo
from tests.support.waiting import eventually

SETUP = 'echo "set up on $COCKPIT_PORT" > setup.txt'
PROJECT = f"""
copy = [".env", "../outside", "linked", "missing.txt"]
setup = '{SETUP}'
test = "true"
ports = 2
"""


def a_repository(tmp_path: Path) -> Path:
    """A checkout whose committed `.cockpit.toml` asks for a setup and three copies: its
    `.env` (not ignored: only Cockpit keeps it out of commits), a link that leads out of the
    repository, and a file it lacks."""
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": PROJECT, "app.txt": "v1\n"})
    (repo / ".env").write_text("TOKEN=local-only\n")
    (tmp_path / "secret.txt").write_text("not the repository's\n")
    os.symlink(tmp_path / "secret.txt", repo / "linked")
    return repo


async def notices(engine: EngineAPI, session: str) -> list[str]:
    return [row.text for row in await engine.rows(session) if row.kind == "notice"]


async def shell_rows(engine: EngineAPI, session: str) -> list[Row]:
    return [row for row in await engine.rows(session) if row.kind == "shell"]


async def test_copies_in_what_it_lists_and_refuses_what_leads_out(
    engine: EngineAPI, tmp_path: Path
) -> None:
    repo = a_repository(tmp_path)
    record = await engine.create_session("demo", repo, worktree=WorktreeRequest())
    made = read_worktree(record.info)
    assert made is not None
    path = Path(made.path)
    assert (path / ".env").read_text() == "TOKEN=local-only\n"
    assert made.copied == (".env",)
    assert not (path / "linked").exists() and not (tmp_path / "outside").exists()
    said = " ".join(await notices(engine, record.id))
    assert "'../outside' leaves the repository" in said
    assert "linked leads out of the repository" in said
    assert "missing.txt is not in your checkout" in said
    # Never staged: not by a commit, not by a checkpoint; not the session's change either.
    (path / "app.txt").write_text("v2\n")
    assert [c.path for c in await engine.worktree_changes(record.id)] == ["app.txt"]
    status = await engine.worktree_status(record.id)
    assert status is not None and status.changed == 1
    said = await engine.commit_worktree(record.id, "the agent's change")
    assert "Committed" in said
    assert git(path, "show", "--name-only", "--format=", "HEAD") == "app.txt"
    assert git(path, "status", "--porcelain") == "?? .env"
    # Kept by a discard, and by an archive and its restore.
    (path / "app.txt").write_text("v3\n")
    assert "Discarded" in await engine.discard_worktree(record.id)
    assert (path / ".env").read_text() == "TOKEN=local-only\n"
    assert (path / "app.txt").read_text() == "v1\n"
    await engine.archive_worktree(record.id)
    assert not path.exists()
    await engine.restore_worktree(record.id)
    assert (path / ".env").read_text() == "TOKEN=local-only\n"


async def test_the_setup_runs_only_once_its_exact_text_is_approved(
    engine: EngineAPI, tmp_path: Path
) -> None:
    repo = a_repository(tmp_path)
    info = await engine.project(str(repo))
    assert (info.top, info.setup, info.setup_approved) == (str(repo), SETUP, False)
    assert (info.test, info.copy, info.ports) == ("true", (".env", "linked", "missing.txt"), 2)
    assert any("../outside" in problem for problem in info.problems)

    first = await engine.create_session("demo", repo, worktree=WorktreeRequest())
    made = read_worktree(first.info)
    assert made is not None and len(made.ports) == 2
    assert not (Path(made.path) / "setup.txt").exists()
    assert await shell_rows(engine, first.id) == []
    assert any(
        "was not run: you have not approved it" in n for n in await notices(engine, first.id)
    )

    await engine.approve_command(info.top, "setup", SETUP)
    assert (await engine.project(str(repo))).setup_approved
    second = await engine.create_session("demo", repo, worktree=WorktreeRequest())
    made = read_worktree(second.info)
    assert made is not None
    setup_txt = Path(made.path) / "setup.txt"

    async def set_up() -> bool:
        rows = await shell_rows(engine, second.id)
        run = read_shell_run(rows[0].payload) if rows else None
        return isinstance(run, ShellRun) and not run.running

    await eventually(set_up, 20, "the setup command to end")
    assert setup_txt.read_text() == f"set up on {made.ports[0]}\n"
    assert set(made.ports).isdisjoint(read_worktree(first.info).ports)  # type: ignore[union-attr]

    # A changed command asks again; a worktree's own file is never what runs.
    changed = SETUP.replace("set up", "changed")
    commit(repo, {".cockpit.toml": PROJECT.replace(SETUP, changed)}, "another setup")
    assert not (await engine.project(str(repo))).setup_approved
    third = await engine.create_session("demo", repo, worktree=WorktreeRequest())
    assert await shell_rows(engine, third.id) == []
    assert (await engine.project(str(repo), "HEAD~1")).setup_approved


async def test_a_restore_keeps_what_was_copied_in(engine: EngineAPI, tmp_path: Path) -> None:
    repo = a_repository(tmp_path)
    record = await engine.create_session("demo", repo, worktree=WorktreeRequest())
    made = read_worktree(record.info)
    assert made is not None
    engine.allow_automatically(record.id)
    assert await engine.prompt(record.id, "tools") == "end_turn"
    env = Path(made.path) / ".env"
    env.write_text("TOKEN=changed-by-the-user\n")
    (first, *_) = await engine.checkpoints(record.id)
    plan = await engine.restore_preview(record.id, first.id)
    assert ".env" not in [*plan.overwrite, *plan.delete]
    await engine.restore(record.id, first.id)
    assert not (Path(made.path) / "demo-notes.md").exists()
    assert env.read_text() == "TOKEN=changed-by-the-user\n"


async def test_a_repository_with_submodules_fetches_them_first(
    engine: EngineAPI, tmp_path: Path
) -> None:
    """Its `.gitmodules` makes Cockpit's own first command fetch them (no approval: it
    is git's own), as a card the user sees."""
    repo = make_repo(tmp_path / "repo", {".gitmodules": "", "app.txt": "v1\n"})
    record = await engine.create_session("demo", repo, worktree=WorktreeRequest())

    async def fetched() -> bool:
        rows = await shell_rows(engine, record.id)
        run = read_shell_run(rows[0].payload) if rows else None
        return isinstance(run, ShellRun) and not run.running

    await eventually(fetched, 20, "the submodules fetched")
    (row,) = await shell_rows(engine, record.id)
    run = read_shell_run(row.payload)
    assert isinstance(run, ShellRun)
    assert (run.command, run.state, run.exit_code) == (SUBMODULES, "exited", 0)
