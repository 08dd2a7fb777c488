"""Small builders shared by the tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cockpit.ui.status_rules import fit_status, status_parts
from store import Chunk, Frame, SessionRecord, ViewTranscript, chunk_from_update
from store.store import Store
from store.workload import text_update


def reply(session: str, text: str, message_id: str | None = None) -> Chunk:
    """An agent_message_chunk."""
    return chunk_from_update(session, text_update("agent_message_chunk", text, message_id))


def thought(session: str, text: str, message_id: str | None = None) -> Chunk:
    """An agent_thought_chunk."""
    return chunk_from_update(session, text_update("agent_thought_chunk", text, message_id))


def update(session: str, **fields: Any) -> Chunk:
    """Any session/update, from its wire fields."""
    return chunk_from_update(session, fields)


def pieces(text: str, size: int = 4) -> list[str]:
    """`text` cut into `size`-character token deltas."""
    return [text[i : i + size] for i in range(0, len(text), size)]


async def feed(
    store: Store, chunks: Iterable[Chunk], view: ViewTranscript | None = None
) -> list[Frame]:
    """Apply chunks in order; fold every frame into `view` when given; return the frames."""
    frames: list[Frame] = []
    for chunk in chunks:
        for frame in await store.apply(chunk):
            frames.append(frame)
            if view is not None:
                view.apply(frame)
    return frames


async def new_session(store: Store, name: str = "demo") -> str:
    """A stored session id."""
    record = await store.create_session(agent=name, command=["python", "agent.py"], cwd="/tmp")
    return record.id


def texts(rows: Iterable[Any]) -> list[tuple[str, str]]:
    """(kind, text) of rows or bubbles."""
    return [(row.kind, row.text) for row in rows]


def payloads(rows: Iterable[Any]) -> list[Mapping[str, Any] | None]:
    """The payload of each row or bubble."""
    return [row.payload for row in rows]


def session_record(**fields: Any) -> SessionRecord:
    """A ready session record for the pure UI rules; `fields` override the defaults."""
    defaults: dict[str, Any] = {
        "id": "s1",
        "agent": "demo",
        "command": ("demo",),
        "cwd": "/work/project",
        "title": "A session",
        "status": "ready",
        "agent_session_id": None,
        "created": 0.0,
        "updated": 0.0,
        "modes": None,
        "config_options": None,
        "commands": None,
        "usage": None,
        "info": None,
        "unread": False,
        "draft": "",
    }
    return SessionRecord(**{**defaults, **fields})


def status_text(
    record: SessionRecord, agent_title: str, live_status: str, width: int, pending: int = 0
) -> str:
    """The status line as the app draws it at `width` cells."""
    return fit_status(status_parts(record, agent_title, live_status, pending), width)
