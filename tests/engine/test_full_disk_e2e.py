"""A disk that fills while a real agent streams a long reply (SQLite's own SQLITE_FULL, see
tests/support/full_disk.py), through the engine, `cockpit run` and the TUI. It used to be silent:
`cockpit run` printed the whole reply, stored a sixth of it and ended in a traceback, and
the TUI said "ready". Now the user hears at once, nothing is lost while room comes back,
and `cockpit run` says what it could not save and exits 5."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.api import EngineEvent, FramesEvent, ProblemEvent, SavingEvent
from cockpit.cli.exits import EXIT_STORE
from cockpit.engine.core import Engine
from cockpit.paths import service_lock
from store.locks import SessionLocks
from store.workload import benchmark_reply
from tests.cli.test_cli import ROOT
from tests.cli.test_cli_reading import a_store_left_mid_turn, without_local
from tests.support.engine_helpers import demo, open_engine
from tests.support.full_disk import fill, free, full_fs_missing, on_a_full_fs
from tests.support.ui_helpers import local, make_app, ready, send, wait_until

SIZE = 50_000
REPLY = benchmark_reply(SIZE)
"""What the demo agent streams for `bench 50000`, in 4-character chunks."""

FULL = "database or disk is full"


def on_disk(path: Path) -> list[tuple[str, str]]:
    """(kind, text) of every row the database file holds, read by another connection."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT kind, text FROM messages ORDER BY seq").fetchall()


class Heard:
    """The problems and saving states the engine told its clients, with how much of the
    reply the client had been shown when each came."""

    def __init__(self, engine: Engine, session: str) -> None:
        self.engine = engine
        self.session = session
        self.problems: list[tuple[str | None, str, int]] = []
        self.saving: list[str | None] = []
        self.shown = 0
        engine.subscribe(self)

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, ProblemEvent):
            self.problems.append((event.session, event.message, self.shown))
        elif isinstance(event, SavingEvent):
            self.saving.append(event.problem)
        elif isinstance(event, FramesEvent):
            for frame in event.frames:
                if frame.kind == "agent":
                    self.shown = frame.n


async def started_on_a_full_disk(engine: Engine, project: Path) -> tuple[str, Heard]:
    """A demo session whose agent is up, on a store that has just filled its disk."""
    record = await engine.create_session(demo(), project)
    await engine.start(record.id)
    heard = Heard(engine, record.id)
    await fill(engine.store, room=1)  # the prompt fits; the reply does not
    return record.id, heard


async def test_a_reply_streamed_onto_a_full_disk_is_told_at_once_and_kept_whole(
    tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    async with open_engine(home) as (engine, recorder):
        session, heard = await started_on_a_full_disk(engine, project_dir)
        turn = asyncio.ensure_future(engine.prompt(session, f"bench {SIZE}"))
        await recorder.wait_for(lambda: bool(heard.problems))
        where, message, shown = heard.problems[0]
        assert where is None and FULL in message and "quitting" in message
        assert shown < SIZE, "the problem came only once the whole reply was shown"
        assert heard.saving == [FULL] and engine.saving_problem == FULL
        await free(engine.store)  # room comes back while the reply streams on
        assert await turn == "end_turn"
        await recorder.wait_for(lambda: heard.saving == [FULL, None])
        assert engine.saving_problem is None
        rows = on_disk(home / "cockpit.db")
        assert rows == [("user", f"bench {SIZE}"), ("agent", REPLY)]
        assert [(b.kind, b.text) for b in recorder.view(session)] == rows
        assert len(heard.problems) == 1, "one problem, not one per batch of the reply"


async def test_a_disk_that_frees_after_the_turn_gets_the_reply_without_more_activity(
    tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    async with open_engine(home) as (engine, recorder):
        session, heard = await started_on_a_full_disk(engine, project_dir)
        assert await engine.prompt(session, f"bench {SIZE}") == "end_turn"
        stored = on_disk(home / "cockpit.db")  # the reply's first flush may have fit
        assert stored[0] == ("user", f"bench {SIZE}") and len(stored) <= 2
        assert all(REPLY.startswith(text) and text != REPLY for _, text in stored[1:])
        assert engine.saving_problem == FULL and heard.saving == [FULL]
        await free(engine.store)
        await recorder.wait_for(lambda: heard.saving == [FULL, None], timeout=10)
        assert engine.saving_problem is None
        rows = on_disk(home / "cockpit.db")
        assert rows == [("user", f"bench {SIZE}"), ("agent", REPLY)]
        assert [(b.kind, b.text) for b in recorder.view(session)] == rows
        # The end of the turn waited for room like the reply: no second problem, and the
        # session is stored ready, not left working.
        assert len(heard.problems) == 1, heard.problems
        assert stored_status(home / "cockpit.db", session) == "ready"


def stored_status(path: Path, session: str) -> str:
    """The status the database file holds for `session`, read by another connection."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT status FROM sessions WHERE id = ?", (session,)).fetchone()
    return str(row[0])


def run_on_a_full_disk(
    home: Path, project: Path, free_after: float
) -> subprocess.CompletedProcess[str]:
    """`cockpit run` of the demo agent's long reply, every store it opens filling its disk
    (room comes back `free_after` seconds after the first failed write; never if < 0)."""
    command = ["run", "--cwd", str(project), "bench", str(SIZE)]
    return subprocess.run(
        [sys.executable, "-m", "tests.support.full_disk", "4", str(free_after), *command],
        cwd=ROOT,
        env={**os.environ, "COCKPIT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cockpit_run_on_a_disk_that_stays_full_says_what_it_lost_and_exits_5(
    tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    result = run_on_a_full_disk(home, project_dir, -1)
    assert result.returncode == EXIT_STORE == 5, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("cockpit: Cockpit cannot save the transcript: " + FULL)
    assert lines[-1] == (
        f"cockpit: the transcript could not be saved ({FULL}): 1 message "
        f"({SIZE:,} characters) could not be stored in full"
    )
    assert result.stdout.strip() == REPLY.strip(), "the reply is shown whole all the same"
    rows = on_disk(home / "cockpit.db")
    assert [kind for kind, _ in rows] == ["user", "agent"][: len(rows)]
    assert rows[0] == ("user", f"bench {SIZE}")
    stored = rows[1][1] if len(rows) > 1 else ""
    assert REPLY.startswith(stored) and len(stored) < SIZE, "what it stored is kept as it was"


def test_cockpit_run_on_a_disk_that_frees_stores_everything_and_still_exits_5(
    tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    # Room comes back at once after the first failed write: the reply streams on for long
    # after it, so the retry (not the exit) saves it, however fast the machine is.
    result = run_on_a_full_disk(home, project_dir, 0)
    assert result.returncode == EXIT_STORE, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "cockpit: Cockpit cannot save the transcript: database or disk is full. What the "
        "agents send is kept in memory and saved as soon as there is room; quitting before "
        "then loses it.",
        "cockpit: the transcript is saved again",
        f"cockpit: the transcript could not be saved for a while ({FULL}); all of it is saved now",
    ]
    assert on_disk(home / "cockpit.db") == [("user", f"bench {SIZE}"), ("agent", REPLY)]


async def test_the_tui_says_the_transcript_is_not_saved_until_it_is(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 30)) as pilot:
        session = await ready(app)

        def status() -> str:
            return str(app.query_one("#status").render())

        assert "NOT SAVED" not in status()
        await fill(local(app).store, room=1)
        await send(app, pilot, f"bench {SIZE}")
        await wait_until(lambda: "NOT SAVED" in status())
        assert status().startswith("NOT SAVED")  # first, before what the session does
        assert app.engine.saving_problem == FULL
        await free(local(app).store)
        await wait_until(lambda: "NOT SAVED" not in status(), timeout=30)
        await wait_until(lambda: app.engine.status(session) == "ready", timeout=30)
        await pilot.pause()
        rows = await app.engine.rows(session)
        assert rows[-1].kind == "agent" and rows[-1].text == REPLY


@pytest.mark.real_spawn  # a service it starts runs in the full file system's namespace
@pytest.mark.parametrize("local", ["1", ""], ids=["local", "attached"])
@pytest.mark.parametrize("words", [("run", "hello"), ()], ids=["run", "tui"])
async def test_a_command_that_cannot_open_the_store_on_a_full_file_system_says_why(
    tmp_path: Path, local: str, words: tuple[str, ...]
) -> None:
    """A file system with no block left: a command that must write the store says why in
    one line. With --local `run` and the TUI ended in `sqlite3.OperationalError: disk I/O
    error` (the engine opening the store); now they name the file, and exit 5 as for a
    read-only store. Attached, the service that could not start said "[Errno 28] No space
    left on device" and the command exited 6; now it names the file the service could not
    write (its lock, the first file it writes) and exits 5: the store cannot be written."""
    result, mount_point = await on_a_full_fs_from(tmp_path, local, words)
    one_line(result)
    assert result.returncode == EXIT_STORE, result.stderr
    if local:
        database = mount_point / "home" / "cockpit.db"
        assert result.stderr.startswith(f"cockpit: cannot write {database}: "), result.stderr
    else:
        lock = service_lock(mount_point / "home")
        assert result.stderr == f"cockpit: cannot write {lock}: {NO_SPACE}\n"


@pytest.mark.real_spawn
@pytest.mark.parametrize("local", ["1", ""], ids=["local", "attached"])
@pytest.mark.parametrize("words", [("run", "hello"), ()], ids=["run", "tui"])
async def test_a_store_that_opens_but_cannot_take_the_notes_of_recovery_says_why(
    tmp_path: Path, local: str, words: tuple[str, ...]
) -> None:
    """The store opens on the full file system (its -wal and -shm files were there), the
    locks are written over in place, and the first block it needs is for the note recovery
    adds to the session left mid-turn. With --local that failure ended in a traceback
    (`database or disk is full`, raised again by the store's close); attached, in exit 6
    and the same words. Now both name the database and exit 5."""
    result, mount_point = await on_a_full_fs_from(tmp_path, local, words, session_lock=True)
    one_line(result)
    database = mount_point / "home" / "cockpit.db"
    assert result.stderr == f"cockpit: cannot write {database}: {FULL}\n"
    assert result.returncode == EXIT_STORE


@pytest.mark.real_spawn
@pytest.mark.parametrize("local", ["1", ""], ids=["local", "attached"])
async def test_a_session_lock_that_cannot_be_written_during_recovery_is_named(
    tmp_path: Path, local: str
) -> None:
    """The store opens, but recovery cannot write the lock of the session left mid-turn:
    the command named no file ("No space left on device"). Now it names the lock."""
    result, mount_point = await on_a_full_fs_from(tmp_path, local, ("run", "hello"), opens=True)
    one_line(result)
    locks = re.escape(f"{mount_point}/home/locks/")
    assert re.fullmatch(rf"cockpit: cannot write {locks}\S+\.lock: {NO_SPACE}\n", result.stderr)
    assert result.returncode == EXIT_STORE


NO_SPACE = os.strerror(errno.ENOSPC)


def one_line(result: subprocess.CompletedProcess[str]) -> None:
    """What the command said is one sentence: no traceback, no errno."""
    assert "Traceback" not in result.stderr and "[Errno" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr


async def on_a_full_fs_from(
    tmp_path: Path,
    local: str,
    words: tuple[str, ...],
    *,
    opens: bool = False,
    session_lock: bool = False,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`cockpit WORDS` (attached, or with --local when `local`) on a full file system holding
    a copy of a store left mid-turn; and where it is mounted. With `opens` the copy has
    its -wal and -shm files (a reader holds the store open as it is copied) and the
    service's lock, so the store opens and a service locks it without a new block; with
    `session_lock` the lock of the session left mid-turn is there too. A lock that is
    there is written over in place."""
    missing = full_fs_missing()
    if missing:
        pytest.skip(missing)
    home = tmp_path / "home"
    session = await a_store_left_mid_turn(home)
    opens = opens or session_lock
    if opens:
        service_lock(home).write_text("1\n")
    if session_lock:
        SessionLocks(home / "cockpit.db").path(session).write_text("1\n")
    env = {
        **without_local(),
        "PYTHONPATH": str(ROOT),
        **({"COCKPIT_LOCAL": local} if local else {}),
    }
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    command = [sys.executable, "-m", "cockpit", *words]
    with contextlib.closing(sqlite3.connect(home / "cockpit.db")) as reader:
        if opens:
            reader.execute("SELECT count(*) FROM sessions").fetchall()
        result = await asyncio.to_thread(on_a_full_fs, home, command, mount_point, env)
    return result, mount_point
