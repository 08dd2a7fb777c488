"""`cockpit run` and friends as real subprocesses: asking on a terminal while stdout is a
pipe, the exit codes (1 for another stop reason, 130 on Ctrl-C, 2 for a store from a
newer Cockpit), and what --verbose prints."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import pytest

from cockpit import protocol
from cockpit.cli.exits import EXIT_STORE
from cockpit.cli.main import parser
from cockpit.cli.run import run_command
from cockpit.paths import service_socket
from cockpit.remote.launch import query_service
from cockpit.service import daemon
from store.store import Store
from tests.cli.test_cli import ROOT, cockpit
from tests.engine.test_engine_restart import TINY
from tests.support.waiting import eventually

TINY_CMD = f"{sys.executable} {TINY}"


def start(home: Path, *args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "cockpit", *args],
        cwd=ROOT,
        env={**os.environ, "COCKPIT_HOME": str(home)},
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def read_until(stream: IO[bytes], done: bytes | int, timeout: float = 60) -> bytes:
    """Read `stream` until it holds `done` (bytes) or that many bytes (int)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while (done not in seen) if isinstance(done, bytes) else (len(seen) < done):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"timed out; so far: {seen!r}"
        data = os.read(stream.fileno(), 65536)
        assert data, f"the stream ended; so far: {seen!r}"
        seen += data
    return seen


def test_a_question_is_asked_when_stdin_is_a_terminal_and_stdout_a_pipe(
    tmp_path: Path, readme_project: Path
) -> None:
    master, slave = os.openpty()
    process = start(
        tmp_path / "home", "run", "--cwd", str(readme_project), "permission", stdin=slave
    )
    os.close(slave)
    try:
        assert process.stderr is not None
        asked = read_until(process.stderr, b"choose a number (Enter cancels): ").decode()
        assert "? The agent asks to: Write demo-notes.md [edit]" in asked
        assert "  1. Allow once (allow_once)" in asked
        os.write(master, b"1\n")
        out, err = process.communicate(timeout=60)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    stdout = out.decode()
    assert "* Allowed once: Write demo-notes.md\n" in stdout
    assert "The agent asks" not in stdout  # stdout holds only the session
    assert "Decision received: I wrote `demo-notes.md` (allowed once)." in stdout
    assert (readme_project / "demo-notes.md").exists()


def test_another_stop_reason_exits_one(tmp_path: Path, readme_project: Path) -> None:
    result = cockpit(
        tmp_path / "home",
        "run",
        "--cwd",
        str(readme_project),
        "--agent-cmd",
        TINY_CMD,
        "max_tokens",
    )
    assert result.returncode == 1
    assert "cockpit: the turn ended with stop reason 'max_tokens'" in result.stderr
    assert "! The agent stopped: it reached its output token limit." in result.stdout


def test_ctrl_c_cancels_the_turn_and_exits_130(tmp_path: Path, readme_project: Path) -> None:
    home = tmp_path / "home"
    process = start(home, "run", "--cwd", str(readme_project), "slow")
    try:
        assert process.stdout is not None
        first = read_until(process.stdout, 60)
        process.send_signal(signal.SIGINT)
        rest, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "cockpit: the turn ended with stop reason 'cancelled'" in err.decode()
    printed = (first + rest).decode()
    (listed,) = json.loads(cockpit(home, "ls", "--json").stdout)
    shown = json.loads(cockpit(home, "show", listed["id"], "--json").stdout)
    (reply,) = [row for row in shown["rows"] if row["kind"] == "agent"]
    assert reply["text"].startswith("# A slow reply")
    assert len(reply["text"]) >= 60
    # what was shown is what was kept, and the transcript says the turn was cut short
    assert printed.strip() == reply["text"].strip() + "\n\n! The turn was cancelled."
    assert [row["text"] for row in shown["rows"] if row["kind"] == "notice"] == [
        "The turn was cancelled."
    ]
    assert len(reply["text"]) < 1200  # cut short by the cancel


def test_verbose_status_lines_are_cleaned_of_escape_sequences(
    tmp_path: Path, readme_project: Path
) -> None:
    result = cockpit(
        tmp_path / "home",
        "run",
        "--verbose",
        "--cwd",
        str(readme_project),
        "--agent-cmd",
        TINY_CMD,
        "ask",
    )
    assert result.returncode == 0, result.stderr
    assert "[waiting] Delete everything\n" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "answered: no" in result.stdout  # no terminal to ask: rejected


def test_a_store_from_a_newer_cockpit_is_one_clear_line(
    tmp_path: Path, readme_project: Path
) -> None:
    home = tmp_path / "home"
    assert cockpit(home, "ls").returncode == 0
    assert not (home / "cockpit.db").exists(), "ls made a store where there was none"
    home.mkdir(exist_ok=True)
    with sqlite3.connect(home / "cockpit.db") as db:
        db.execute("PRAGMA user_version = 999")
    for args in (["ls"], ["show", "abc"], ["run", "--cwd", str(readme_project), "hello"], []):
        result = cockpit(home, *args, cwd=readme_project)  # [] opens the TUI
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("cockpit: ")
        assert "newer Cockpit" in result.stderr
        assert result.stdout == ""


def test_a_file_that_is_not_a_store_is_one_clear_line_with_local(
    tmp_path: Path, readme_project: Path
) -> None:
    """`run` and the TUI with the engine in process: as `ls` says it (exit 2). Both ended
    in `sqlite3.DatabaseError: file is not a database` as the engine opened the store."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "cockpit.db").write_text("notes, not a database\n" * 100)
    for args in (["--local", "run", "--cwd", str(readme_project), "hello"], ["--local"]):
        result = cockpit(home, *args, cwd=readme_project)
        assert (result.returncode, result.stdout) == (2, ""), (args, result.stderr)
        assert result.stderr == (
            f"cockpit: {home}/cockpit.db is not a Cockpit store (SQLite says: file is not a "
            "database); set COCKPIT_HOME or --data-dir to use another one\n"
        )


# -- a store that refuses writes ---------------------------------------------------------------


@pytest.fixture
def writes_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store this process opens refuses writes once it is open: SQLite's own
    `query_only` on its writer, so a write fails as on a file turned read-only."""
    opening = Store.open

    async def refusing(path: str | os.PathLike[str], **options: Any) -> Store:
        store = await opening(path, **options)
        await store._writer.execute("PRAGMA query_only = 1")
        return store

    monkeypatch.setattr(Store, "open", refusing)


@contextlib.asynccontextmanager
async def service_here(home: Path) -> AsyncIterator[None]:
    """The store's service in this process (its lock, its socket), stopped after."""
    running = asyncio.ensure_future(daemon.serve(home, idle=600))
    await eventually(lambda: service_socket(home).exists() or running.done(), 20, "it to listen")
    try:
        yield
    finally:
        if not running.done():
            await query_service(home, protocol.STOP, {"restart": True}, answer_within=30)
        await asyncio.wait_for(running, 30)


@pytest.mark.parametrize("where", ["local", "attached"])
async def test_a_session_the_store_refuses_is_one_clear_line_and_exit_5(
    where: str,
    isolated_home: Path,
    readme_project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    writes_refused: None,
) -> None:
    """The engine words a write the store refused as the contract's NotSaved, in process
    and across the service's socket alike: `cockpit run` says it in one line and exits 5,
    as it did when it caught the database's own error."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    args = parser().parse_args(["run", "--cwd", str(readme_project), "hello"])
    if where == "local":
        code = await run_command(args, isolated_home)
    else:
        monkeypatch.delenv("COCKPIT_LOCAL")
        async with service_here(isolated_home):
            code = await run_command(args, isolated_home)
    err = capsys.readouterr().err
    assert (code, err) == (
        EXIT_STORE,
        "cockpit: the session could not be stored: attempt to write a readonly database\n",
    )
