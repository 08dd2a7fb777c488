"""Schema, migrations, permissions and refusal of a newer database."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import aiosqlite
import pytest

from store import SchemaError, note
from store.schema import LATEST, MIGRATIONS, migrate, schema_version
from store.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def make_at(path: Path, version: int) -> None:
    """A database built by an older Cockpit: migrated only up to `version`."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await migrate(db, str(path), target=version)


async def test_a_new_store_is_wal_owner_only_and_current(tmp_path: Path) -> None:
    folder = tmp_path / "deep" / "data"
    path = folder / "cockpit.db"
    async with await Store.open(path) as store:
        session = await store.create_session(agent="a", command=["a"], cwd="/")
        await store.apply(note(session.id, "notice", "x"))
        assert mode(folder) == 0o700
        for name in ("cockpit.db", "cockpit.db-wal", "cockpit.db-shm"):
            assert mode(folder / name) == 0o600, name
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert db.execute("PRAGMA user_version").fetchone() == (LATEST,)


async def test_the_writer_runs_with_synchronous_normal(tmp_path: Path) -> None:
    async with (
        await Store.open(tmp_path / "c.db") as store,
        store._writer.execute("PRAGMA synchronous") as cursor,
    ):
        assert await cursor.fetchone() == (1,)


async def test_an_existing_folder_keeps_its_permissions(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    async with await Store.open(tmp_path / "c.db"):
        pass
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "c.db") == 0o600


@pytest.mark.parametrize("start", range(LATEST))
async def test_each_older_version_upgrades(tmp_path: Path, start: int) -> None:
    path = tmp_path / "c.db"
    await make_at(path, start)
    async with await Store.open(path):
        pass
    async with aiosqlite.connect(path) as db:
        assert await schema_version(db) == LATEST


async def test_v1_database_with_data_upgrades_to_v2_intact(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    await make_at(path, 1)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO sessions (id, agent, command, cwd, created, updated) VALUES"
            " ('s1', 'demo', '[\"demo\"]', '/', 1, 1)"
        )
        db.execute(
            "INSERT INTO messages (session, seq, key, kind, role, turn, bytes, created, updated, text)"
            " VALUES ('s1', 1, 'user:1:@1', 'user', 'user', 1, 5, 1, 1, 'hello')"
        )
    async with await Store.open(path) as store:
        record = await store.get_session("s1")
        assert record is not None
        assert record.unread  # a message the v2 read mark had not reached
        assert record.draft == ""
        assert [r.text for r in await store.all_rows("s1")] == ["hello"]
        await store.apply(note("s1", "notice", "after the upgrade"))
        record = await store.get_session("s1")
        assert record is not None
        assert record.updated > 1
    with sqlite3.connect(path) as db:
        indexes = {
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        assert "messages_page" in indexes
        plan = " ".join(
            str(r)
            for r in db.execute(
                "EXPLAIN QUERY PLAN SELECT seq, bytes FROM messages WHERE session = 's1'"
                " AND seq < 9 ORDER BY seq DESC LIMIT 121"
            )
        )
        assert "COVERING INDEX messages_page" in plan


async def test_a_database_from_a_newer_cockpit_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path):
        pass
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {LATEST + 1}")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(
        SchemaError,
        match=rf"newer Cockpit \(schema version {LATEST + 1}; this one knows up to {LATEST}\)",
    ):
        await Store.open(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


async def test_a_newer_rollback_journal_database_keeps_its_bytes_mode_and_journal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE future (x)")
        db.execute("INSERT INTO future VALUES ('kept')")
        db.execute("PRAGMA user_version = 99")
    db.close()
    path.chmod(0o644)
    before = path.read_bytes()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    db.close()
    with pytest.raises(SchemaError, match=r"newer Cockpit \(schema version 99;"):
        await Store.open(path)
    assert path.read_bytes() == before
    assert mode(path) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.db"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    db.close()


async def test_a_failing_migration_leaves_the_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.db"
    await make_at(path, 1)

    async def broken(db: aiosqlite.Connection) -> None:
        await db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("disk full")

    monkeypatch.setattr("store.schema.MIGRATIONS", (MIGRATIONS[0], broken))
    with pytest.raises(RuntimeError, match="disk full"):
        await Store.open(path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (1,)
        assert (
            db.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchall() == []
        )
