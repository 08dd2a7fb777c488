"""`!command` through the contract, in process and through a real service: the user's shell
in the session's root with the client's environment and no input; its row stored before it
runs; output live, bounded and with secret values masked (in the export too); killed by
`stop_shell` and with its session; its output sent with a prompt when attached."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cockpit.api import EngineAPI, Row, ShellRun, read_attachments, read_shell_run
from cockpit.engine.core import Engine
from cockpit.engine.shell_output import OUTPUT_HEAD, OUTPUT_TAIL
from cockpit.environment import current
from tests.support.ui_service_helpers import Engines
from tests.support.waiting import eventually

SECRET = "s3cret-value-for-the-test"


async def run_of(engine: EngineAPI, session: str, key: str) -> tuple[Row, ShellRun]:
    row = await engine.row(session, key)
    assert row is not None, f"no row {key}"
    run = read_shell_run(row.payload)
    assert isinstance(run, ShellRun), run
    return row, run


async def ended(engine: EngineAPI, session: str, key: str) -> tuple[Row, ShellRun]:
    """The run's row once it says the command ended."""

    async def done() -> bool:
        return not (await run_of(engine, session, key))[1].running

    await eventually(done, 20, f"the command of {key} to end")
    return await run_of(engine, session, key)


@pytest.fixture
async def engine(engines: Engines, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EngineAPI]:
    """An engine of the test's kind, opened with a word and a secret in its environment
    (the client's, which the service must use)."""
    monkeypatch.setenv("SHELL_TEST_WORD", "the-clients-word")
    monkeypatch.setenv("SHELL_TEST_API_TOKEN", SECRET)
    monkeypatch.setenv("SHELL", "/bin/sh")
    engines.project.mkdir(exist_ok=True)
    opened: EngineAPI = await engines.factory()()
    yield opened
    await opened.close()


async def test_a_command_runs_in_the_root_with_the_clients_world(
    engine: EngineAPI, engines: Engines
) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, 'echo "$SHELL_TEST_WORD"; pwd; cat; echo read-no-input')
    row, run = await ended(engine, record.id, key)
    assert run.state == "exited" and run.exit_code == 0, row
    assert row.text.splitlines() == [
        "the-clients-word",
        str(engines.project.resolve()),
        "read-no-input",
    ]
    assert row.kind == "shell" and row.role == "user"
    assert engine.status(record.id) != "ready", "the agent started for a command"


async def test_the_row_is_stored_before_the_command_runs(
    engine: EngineAPI, engines: Engines
) -> None:
    record = await engine.create_session("demo", engines.project)
    marker = engines.project / "ran"
    key = await engine.run_shell(record.id, f"sleep 0.5; touch {shlex.quote(str(marker))}")
    _, run = await run_of(engine, record.id, key)
    assert run.running and run.command.startswith("sleep 0.5")
    assert not marker.exists()
    await ended(engine, record.id, key)
    assert marker.exists()


async def test_secret_values_are_masked_in_the_row_and_the_export(
    engine: EngineAPI, engines: Engines
) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, f'echo "$SHELL_TEST_API_TOKEN"; echo {SECRET}')
    row, run = await ended(engine, record.id, key)
    assert row.text.splitlines() == ["[masked SHELL_TEST_API_TOKEN]"] * 2
    assert SECRET not in run.command and "[masked SHELL_TEST_API_TOKEN]" in run.command
    target = await engine.export(record.id, "out.md")
    exported = Path(target).read_text(encoding="utf-8")
    assert SECRET not in exported and "[masked SHELL_TEST_API_TOKEN]" in exported


async def test_stop_shell_kills_the_command_and_what_it_started(
    engine: EngineAPI, engines: Engines
) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, "sleep 60 & echo $!; wait")
    await eventually(lambda: _first_line(engine, record.id, key), 10, "the child's pid")
    child = int(await _first_line(engine, record.id, key))
    assert await engine.stop_shell(record.id)
    _, run = await ended(engine, record.id, key)
    assert run.state == "killed"
    await eventually(lambda: not _alive(child), 5, "the child to be gone")
    assert not await engine.stop_shell(record.id)


async def test_a_command_dies_with_its_session(engine: EngineAPI, engines: Engines) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, "echo $$; sleep 60")
    await eventually(lambda: _first_line(engine, record.id, key), 10, "the shell's pid")
    shell = int(await _first_line(engine, record.id, key))
    await engine.stop(record.id)
    _, run = await ended(engine, record.id, key)
    assert run.state == "killed"
    assert not _alive(shell)


async def test_long_output_keeps_its_head_and_tail(engine: EngineAPI, engines: Engines) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(
        record.id, "echo FIRST; i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done"
    )
    row, run = await ended(engine, record.id, key)
    assert row.text.startswith("FIRST\nline-0\n") and row.text.endswith("line-19999\n")
    assert run.left_out > 0
    assert len(row.text) < OUTPUT_HEAD + OUTPUT_TAIL + 100


async def test_a_shell_that_cannot_start_says_why(
    engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELL", "/no/such/shell")
    engines.project.mkdir(exist_ok=True)
    engine: EngineAPI = await engines.factory()()
    try:
        record = await engine.create_session("demo", engines.project)
        key = await engine.run_shell(record.id, "echo hi")
        row, run = await ended(engine, record.id, key)
        assert run.state == "failed"
        assert "/no/such/shell" in row.text
    finally:
        await engine.close()


async def test_an_attached_output_goes_with_the_prompt(engine: EngineAPI, engines: Engines) -> None:
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, "echo attached-output")
    await ended(engine, record.id, key)
    engine.send(record.id, "what did it say?", attach=[key, "shell:no-such-run"])

    async def prompt_row() -> Row | None:
        rows = [row for row in await engine.rows(record.id) if row.kind == "user"]
        return rows[-1] if rows else None

    await eventually(prompt_row, 20, "the prompt stored")
    user = await prompt_row()
    assert user is not None and user.text == "what did it say?"
    attachments = read_attachments(user.payload)
    assert [a.command for a in attachments] == ["echo attached-output"]
    assert user.payload is not None
    sent = user.payload["blocks"][0]["text"]
    assert "$ echo attached-output\nattached-output\n" in sent and "exit 0" in sent


async def _first_line(engine: EngineAPI, session: str, key: str) -> str:
    row = await engine.row(session, key)
    lines = row.text.splitlines() if row is not None else []
    return lines[0] if lines else ""


def _stored(database: Path, key: str) -> str:
    """The text of the row `key` as the store's file holds it now."""
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        found = db.execute("SELECT text FROM messages WHERE key = ?", (key,)).fetchone()
    return str(found[0]) if found else ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_command_a_crashed_service_left_running_says_it_was_cut(
    engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 of the service while a command runs: the next service finds its row still
    saying it runs, says it was cut (its output so far kept) and kills what was left of
    it: the command's process group."""
    if engines.kind != "service":
        pytest.skip("a crash of the service")
    monkeypatch.setenv("SHELL", "/bin/sh")
    engines.project.mkdir(exist_ok=True)
    engine: EngineAPI = await engines.factory()()
    record = await engine.create_session("demo", engines.project)
    key = await engine.run_shell(record.id, "echo before-the-crash $$; exec sleep 60")
    await eventually(lambda: _first_line(engine, record.id, key), 10, "the output before the crash")
    # Only what is on disk outlives a kill -9: a command's row is written as it prints, and
    # the output shown may still be in the service's memory.
    database = engines.home / "cockpit.db"
    await eventually(lambda: _stored(database, key).startswith("before-the-crash "), 10, "on disk")
    await engines.service.kill()
    await engine.close()
    await engines.start_service()
    engine = await engines.factory()()
    row, run = await run_of(engine, record.id, key)
    orphan = int(row.text.split()[1])
    try:
        assert run.state == "cut"
        assert row.text.startswith("before-the-crash ")
        await eventually(lambda: not _alive(orphan), 10, "the command's group killed")
    finally:
        await engine.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(orphan, signal.SIGKILL)


async def test_a_login_run_with_input_has_its_own_controlling_terminal(
    data_home: Path, project_dir: Path
) -> None:
    """A program that asks on `/dev/tty` (as a password prompt does) reads what the user
    sends there too, in a terminal of a usable size; a program that is not there says so."""
    engine = await Engine.open(data_home)
    try:
        record = await engine.create_session("demo", project_dir)
        live = await engine._live_session(record.id)
        asking = "stty size < /dev/tty; read code < /dev/tty; echo got-$code"
        codes: list[int | None] = []

        async def ended(code: int | None) -> None:
            codes.append(code)

        key = await live.shells.run_with_input(("sh", "-c", asking), current(), ended)
        for _ in range(100):
            if live.shells.send_line("abc"):
                break
            await asyncio.sleep(0.05)
        for _ in range(200):
            if codes:
                break
            await asyncio.sleep(0.05)
        row = await engine.row(record.id, key)
        assert row is not None
        assert "24 80" in row.text and "got-abc" in row.text, row.text
        assert codes == [0]
        missing = await live.shells.run_with_input(("no-such-login",), current(), ended)
        for _ in range(200):
            if len(codes) == 2:
                break
            await asyncio.sleep(0.05)
        row = await engine.row(record.id, missing)
        assert row is not None and "could not run no-such-login" in row.text
        assert codes == [0, 127] and "Traceback" not in row.text
    finally:
        await engine.close()
