"""Every write a client asks for that the store refuses is the contract's NotSaved, with a
line the user can act on: in process and across the service's socket alike. Renaming,
deleting and a session's permission rule let the database's own error through to the
client (a delete on a read-only store was `sqlite3.OperationalError`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import EngineAPI, NotSaved
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import open_socket
from store.store import Store
from tests.cli.test_cli_run import service_here

REFUSED = "the store refuses it"

REFUSALS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    # A file turned read-only: SQLite's `query_only` on the writer.
    "read-only": (
        ("PRAGMA query_only = 1",),
        ("PRAGMA query_only = 0",),
        "attempt to write a readonly database",
    ),
    # Anything else the database refuses (a constraint, a damaged file): a trigger of the
    # writer connection's own, which leaves the file as it was.
    "refused": (
        tuple(
            f"CREATE TEMP TRIGGER refuse_{verb} BEFORE {verb} ON main.sessions "
            f"BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END"
            for verb in ("UPDATE", "DELETE")
        ),
        ("DROP TRIGGER temp.refuse_UPDATE", "DROP TRIGGER temp.refuse_DELETE"),
        REFUSED,
    ),
}

WRITES: dict[str, Callable[[EngineAPI, str], Awaitable[object]]] = {
    "rename": lambda engine, session: engine.rename(session, "renamed"),
    "delete": lambda engine, session: engine.delete(session),
    "set_session_policy": lambda engine, session: engine.set_session_policy(
        session, "read", "allow"
    ),
}

CASES = [
    ("delete", "read-only"),  # a change of a session is held on a read-only file, and retried
    ("delete", "refused"),
    ("rename", "refused"),
    ("set_session_policy", "refused"),
]


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[Store]:
    """Every store this process opens, in order (the service's, when it runs here)."""
    stores: list[Store] = []
    opening = Store.open

    async def keeping(path: str | os.PathLike[str], **options: Any) -> Store:
        store = await opening(path, **options)
        stores.append(store)
        return store

    monkeypatch.setattr(Store, "open", keeping)
    return stores


async def execute(store: Store, statements: tuple[str, ...]) -> None:
    for statement in statements:
        await store._writer.execute(statement)


@contextlib.asynccontextmanager
async def client(where: str, home: Path) -> AsyncIterator[EngineAPI]:
    """An engine of the home: in this process, or a client of its service."""
    if where == "local":
        engine: EngineAPI = await Engine.open(home, config=home / "config")
    else:
        engine = await RemoteEngine.attach(lambda: open_socket(home), name="test-client")
    try:
        yield engine
    finally:
        await engine.close()


@pytest.mark.parametrize("where", ["local", "attached"])
@pytest.mark.parametrize(("write", "refusal"), CASES)
async def test_a_write_the_store_refuses_is_not_saved_and_changes_nothing(
    where: str,
    write: str,
    refusal: str,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[Store],
) -> None:
    refuse, allow, why = REFUSALS[refusal]
    isolated_home.mkdir(parents=True, exist_ok=True)
    project = tmp_path / "project"
    project.mkdir()

    async def check() -> None:
        async with client(where, isolated_home) as engine:
            record = await engine.create_session("demo", project, "kept")
            (store,) = opened
            await execute(store, refuse)
            try:
                with pytest.raises(NotSaved) as caught:
                    await WRITES[write](engine, record.id)
            finally:
                await execute(store, allow)
            assert type(caught.value) is NotSaved
            assert why in str(caught.value) and "\n" not in str(caught.value)
            kept = await engine.session(record.id)  # still stored, as it was
            assert (kept.title, (kept.info or {}).get("policy")) == ("kept", None)
            await engine.add_notice(record.id, "still writable")
            assert [row.text for row in await engine.rows(record.id)] == ["still writable"]

    if where == "local":
        await check()
    else:
        monkeypatch.delenv("COCKPIT_LOCAL")
        async with service_here(isolated_home):
            await check()
