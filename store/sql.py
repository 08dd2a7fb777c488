"""Rows and sessions in SQL: the columns a row is written to and read from, the
statements that write rows (insert-only for new rows, key-guarded upserts for rows written
before, in batches), the records read back, and the session updates that metadata chunks
make. Pure: building statements and records does no I/O."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from store.chunks import Chunk
from store.model import Row, SessionRecord
from store.session_fold import dump_json

JSON_COLUMNS: Final = frozenset({"modes", "config_options", "commands", "usage", "info", "command"})
QUIET_COLUMNS: Final = frozenset({"unread", "draft"})
"""What the user did with a session (read it, wrote a draft), which does not make it newer."""
SESSION_COLUMNS: Final = (
    frozenset({"agent", "title", "status", "agent_session_id", "cwd"})
    | JSON_COLUMNS
    | QUIET_COLUMNS
)

_UPSERT_ROWS: Final = 512
"""Rows per upsert statement (11 parameters each, well under SQLite's 32766)."""


WRITE_COLUMNS: Final = "session, seq, key, kind, role, turn, bytes, created, updated, payload, text"
"""The columns a written row fills, in the order of `row_values`."""


def row_values(row: Row) -> tuple[Any, ...]:
    """A row as the values of WRITE_COLUMNS."""
    payload = dump_json(row.payload) if row.payload is not None else None
    return (
        row.session,
        row.seq,
        row.key,
        row.kind,
        row.role,
        row.turn,
        row.bytes,
        row.created,
        row.updated,
        payload,
        row.text,
    )


def insert_sql(rows: int) -> str:
    """One statement writing `rows` rows this store has never written: it inserts them and
    overwrites nothing (a seq or key already taken is skipped, and missing from what the
    statement returns). A single statement is atomic on its own, so a commit of up to
    _UPSERT_ROWS rows costs one round trip to the database thread."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO messages ({WRITE_COLUMNS}) VALUES {values}"
        " ON CONFLICT DO NOTHING RETURNING session, seq"
    )


def upsert_sql(rows: int) -> str:
    """One statement writing `rows` rows this store has written before: each updates its
    stored row only while that row still has the same key (else it is skipped, and missing
    from what the statement returns), and is inserted again if it went away."""
    values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)
    return (
        f"INSERT INTO messages ({WRITE_COLUMNS}) VALUES {values}"
        " ON CONFLICT (session, seq) DO UPDATE SET"
        " bytes = excluded.bytes, updated = excluded.updated,"
        " payload = excluded.payload, text = excluded.text"
        " WHERE messages.key = excluded.key"
        " RETURNING session, seq"
    )


def row_writes(
    statement: Callable[[int], str], rows: Sequence[Row]
) -> list[tuple[str, tuple[Any, ...], int]]:
    """`rows` as statements of at most _UPSERT_ROWS rows each: (sql, parameters, rows)."""
    writes = []
    for start in range(0, len(rows), _UPSERT_ROWS):
        group = [row_values(row) for row in rows[start : start + _UPSERT_ROWS]]
        writes.append((statement(len(group)), tuple(p for row in group for p in row), len(group)))
    return writes


ROW_COLUMNS: Final = "session, seq, key, kind, role, turn, text, payload, bytes, created, updated"
"""The columns a row is read from, in the order `row_from_db` takes them."""


def _load(value: str | None) -> Any:
    """A JSON column's value (None stays None)."""
    return json.loads(value) if value is not None else None


def row_from_db(record: Sequence[Any]) -> Row:
    """A row read back from the ROW_COLUMNS of a record."""
    session, seq, key, kind, role, turn, text, payload, size, created, updated = record
    return Row(session, seq, key, kind, role, turn, text, _load(payload), size, created, updated)


def session_from_db(record: sqlite3.Row) -> SessionRecord:
    """A session read back from a `sessions` record; lists of the wrong shape read as None."""

    def tupled(value: Any) -> tuple[Mapping[str, Any], ...] | None:
        return tuple(value) if isinstance(value, list) else None

    return SessionRecord(
        id=record["id"],
        agent=record["agent"],
        command=tuple(_load(record["command"]) or ()),
        cwd=record["cwd"],
        title=record["title"],
        status=record["status"],
        agent_session_id=record["agent_session_id"],
        created=record["created"],
        updated=record["updated"],
        modes=_load(record["modes"]),
        config_options=tupled(_load(record["config_options"])),
        commands=tupled(_load(record["commands"])),
        usage=_load(record["usage"]),
        info=_load(record["info"]),
        unread=bool(record["unread"]),
        draft=record["draft"],
    )


def meta_statements(chunk: Chunk) -> list[tuple[str, tuple[Any, ...]]]:
    """The session updates one metadata chunk makes (mode, options, commands, usage, info)."""
    data, session = chunk.data, chunk.session
    where = " WHERE id = ?"
    # A value of the wrong shape changes nothing: a mode id that is an object could not be
    # bound, and a list that is not one would be read back as one.
    if chunk.update == "current_mode_update":
        mode = data.get("currentModeId")
        if not isinstance(mode, str):
            return []
        return [
            (
                "UPDATE sessions SET modes = json_set(coalesce(modes, '{}'), '$.currentModeId', ?)"
                + where,
                (mode, session),
            )
        ]
    if chunk.update == "config_option_update":
        options = data.get("configOptions") or []
        if not isinstance(options, list):
            return []
        return [("UPDATE sessions SET config_options = ?" + where, (dump_json(options), session))]
    if chunk.update == "available_commands_update":
        commands = data.get("availableCommands") or []
        if not isinstance(commands, list):
            return []
        return [("UPDATE sessions SET commands = ?" + where, (dump_json(commands), session))]
    fields = {name: value for name, value in data.items() if name != "sessionUpdate"}
    if chunk.update == "usage_update":
        return [
            (
                "UPDATE sessions SET usage = json_patch(coalesce(usage, '{}'), ?)" + where,
                (dump_json(fields), session),
            )
        ]
    title = data.get("title")
    return [
        (
            "UPDATE sessions SET title = coalesce(?, title),"
            " info = json_patch(coalesce(info, '{}'), ?)" + where,
            (title if isinstance(title, str) else None, dump_json(fields), session),
        )
    ]
