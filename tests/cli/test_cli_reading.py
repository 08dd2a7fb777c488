"""`cockpit ls` and `cockpit show` with no service: the store read on its own, read-only,
at once on a full disk or beside a Cockpit that holds the store, saying in one line why
when it cannot be read; and through a service that does not answer, not stuck on it.

They used to open the engine, which opens the store to write, migrates it and writes a
row into every session a stopped Cockpit left mid-turn: on a full disk `ls` hung over
120 s or ended in a `sqlite3.OperationalError` traceback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.api import Status
from cockpit.client import SERVICE_READ_TIMEOUT
from cockpit.paths import service_socket
from store.store import Store
from store.workload import benchmark_reply
from tests.store.test_store_readonly import files_of
from tests.support.checkout import tree_first
from tests.support.full_disk import fill, free, full_fs_missing, on_a_full_fs
from tests.support.helpers import feed, new_session, pieces, reply
from tests.support.service_helpers import cockpit, service_pid, services_stopped

REPLY = "A reply that was streamed and stored. " * 10

LONG = benchmark_reply(50_000)
"""A reply longer than what a full disk's last free page can take."""

QUICK = 5.0
"""Seconds `ls` or `show` may take, generously, where they used to hang."""


async def a_store_left_mid_turn(home: Path) -> str:
    """A store a Cockpit left in the middle of a turn (it was killed): the session's stored
    status is "working", its reply stored so far."""
    async with await Store.open(home / "cockpit.db") as store:
        session = await new_session(store)
        await store.update_session(session, title="left mid-turn")
        await store.begin_turn(session, "hello")
        await feed(store, [reply(session, p) for p in pieces(REPLY)])
        await store.update_session(session, status=Status.WORKING)
        return session


def without_local() -> dict[str, str]:
    """This environment, attached to the service (COCKPIT_LOCAL unset)."""
    return {key: value for key, value in os.environ.items() if key != "COCKPIT_LOCAL"}


def whole(home: Path) -> dict[str, object]:
    """Every file and folder of a home, with the bytes and times of the files."""
    return {
        str(path.relative_to(home)): (path.read_bytes(), path.stat().st_mtime_ns)
        if path.is_file()
        else "folder"
        for path in sorted(home.rglob("*"))
    }


@pytest.fixture(params=["local", "no service"])
def reach(
    request: pytest.FixtureRequest, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """`--local` (COCKPIT_LOCAL), or attached to the service, of which none runs."""
    if request.param == "no service":
        monkeypatch.delenv("COCKPIT_LOCAL")
    isolated_home.mkdir(parents=True, exist_ok=True)
    with services_stopped(isolated_home):
        yield str(request.param)


def ok_within(args: tuple[str, ...], home: Path, limit: float = QUICK) -> str:
    started = time.monotonic()
    result = cockpit(*args, home=home)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert took < limit, f"`cockpit {' '.join(args)}` took {took:.1f} s"
    return result.stdout


async def test_ls_and_show_without_a_service_read_and_write_nothing(
    isolated_home: Path, reach: str
) -> None:
    home = isolated_home
    session = await a_store_left_mid_turn(home)
    before = whole(home)
    assert "cockpit.db-wal" not in before
    listed = ok_within(("ls",), home)
    assert listed.startswith(f"{session}  {Status.CLOSED}  ")  # nothing runs it now
    assert "left mid-turn" in listed
    (record,) = json.loads(ok_within(("ls", "--json"), home))
    assert (record["id"], record["status"]) == (session, Status.CLOSED)
    shown = json.loads(ok_within(("show", session[:4], "--json"), home))
    assert [(r["kind"], r["text"]) for r in shown["rows"]] == [("user", "hello"), ("agent", REPLY)]
    assert REPLY in ok_within(("show", session), home)
    assert whole(home) == before, "a read wrote to the store's folder"
    assert service_pid(home) is None, "a read started a service"


async def test_ls_and_show_beside_a_cockpit_on_a_full_disk_answer_at_once(
    isolated_home: Path,
) -> None:
    """The suite's full disk (SQLite's own SQLITE_FULL): a Cockpit holds the store and
    what it cannot write; `ls` and `show` read what is stored, at once, and say the
    session is that Cockpit's."""
    home = isolated_home
    async with await Store.open(home / "cockpit.db") as store:
        session = await new_session(store)
        await store.begin_turn(session, "hello")
        await store.update_session(session, status=Status.WORKING, title="streaming")
        await fill(store)
        try:
            await feed(store, [reply(session, p) for p in pieces(LONG, 400)])
            with contextlib.suppress(sqlite3.OperationalError):  # held, and retried
                await store.flush()
            assert store.failure is not None, "the disk did not fill"
            listed = await asyncio.to_thread(ok_within, ("ls",), home)
            assert listed.startswith(f"{session}  {Status.WORKING}  ")  # as its Cockpit says
            shown = await asyncio.to_thread(ok_within, ("show", session, "--json"), home)
            assert [r["text"] for r in json.loads(shown)["rows"]] == ["hello"]  # as stored
            assert store.unwritten()[0] == 1, "the Cockpit no longer holds the reply"
        finally:
            await free(store)  # so that it closes


@pytest.mark.parametrize("local", ["1", ""])
async def test_ls_and_show_on_a_full_file_system_answer_at_once(tmp_path: Path, local: str) -> None:
    """A file system with no block left (a tmpfs, filled): the store a killed Cockpit left
    there is read, at once and right. It used to end in `sqlite3.OperationalError: disk
    I/O error` (the engine opened the store to write)."""
    missing = full_fs_missing()
    if missing:
        pytest.skip(missing)
    home = tmp_path / "home"
    session = await a_store_left_mid_turn(home)
    env = tree_first({**without_local(), **({"COCKPIT_LOCAL": local} if local else {})})
    for args in (("ls",), ("show", session)):
        mount_point = tmp_path / f"full-{args[0]}"
        mount_point.mkdir()
        took = tmp_path / f"took-{args[0]}"
        command = [sys.executable, "-m", "tests.support.full_disk", "--timed", str(took), *args]
        result = await asyncio.to_thread(on_a_full_fs, home, command, mount_point, env)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        seconds = float(took.read_text())
        assert seconds < QUICK, f"`cockpit {args[0]}` took {seconds:.1f} s on a full disk"
        expected = "left mid-turn" if args[0] == "ls" else REPLY
        assert expected in result.stdout


async def test_a_service_that_does_not_answer_is_read_around_and_said(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A service that holds its socket and never answers (its loop stuck): `ls` and
    `show` say so and read the store themselves within seconds (they used to wait the
    hello's 30 s)."""
    monkeypatch.delenv("COCKPIT_LOCAL")
    home = isolated_home
    session = await a_store_left_mid_turn(home)
    path = service_socket(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    with socket.socket(socket.AF_UNIX) as stuck:
        stuck.bind(str(path))
        stuck.listen(8)  # connections wait in its backlog; none is ever answered
        for args in (("ls",), ("show", session)):
            started = time.monotonic()
            result = await asyncio.to_thread(cockpit, *args, home=home)
            took = time.monotonic() - started
            assert result.returncode == 0, result.stderr
            assert result.stderr == (
                f"cockpit: the Cockpit service did not answer within {SERVICE_READ_TIMEOUT:g} s;"
                " read from the store without it (no live states)\n"
            )
            assert took < SERVICE_READ_TIMEOUT + QUICK, f"`cockpit {args[0]}` took {took:.1f} s"
            assert ("left mid-turn" if args[0] == "ls" else REPLY) in result.stdout


@pytest.mark.parametrize("command", [("ls",), ("show", "abc")])
def test_a_file_that_is_not_a_store_is_one_line(isolated_home: Path, command: tuple[str]) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "cockpit.db").write_text("notes, not a database\n" * 100)
    result = cockpit(*command, home=isolated_home)
    assert result.returncode == 2
    assert result.stderr == (
        f"cockpit: {isolated_home / 'cockpit.db'} is not a Cockpit store (SQLite says: file is"
        " not a database); set COCKPIT_HOME or --data-dir to use another one\n"
    )
    assert result.stdout == ""


def test_no_store_is_no_sessions_and_makes_nothing(isolated_home: Path) -> None:
    listed = cockpit("ls", home=isolated_home)
    assert listed.returncode == 0 and listed.stdout.startswith("No sessions yet")
    shown = cockpit("show", "abc", home=isolated_home)
    assert shown.returncode == 2
    assert shown.stderr == "cockpit: no session with an id or a title starting 'abc'\n"
    assert not isolated_home.exists()


def test_inspect_reads_without_writing_too(isolated_home: Path) -> None:
    """`cockpit inspect` finds its session the same way (and writes nothing either)."""
    asyncio.run(a_store_left_mid_turn(isolated_home))
    before = files_of(isolated_home)
    result = cockpit("inspect", "zz", home=isolated_home)
    assert result.returncode == 2 and "no session" in result.stderr
    assert files_of(isolated_home) == before
