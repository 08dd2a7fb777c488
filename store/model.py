"""The records the store hands out: rows, frames, pages and sessions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

ROLE_OF_KIND: Mapping[str, str] = {
    "user": "user",
    "agent": "agent",
    "thought": "agent",
    "tool": "agent",
    "plan": "agent",
    "permission": "user",
    "notice": "system",
    "error": "system",
    "shell": "user",
}
"""Who a row speaks for: the user (a prompt, a decision), the agent, or Cockpit."""


@dataclass(frozen=True, slots=True)
class Row:
    """One stored message: the unit of persistence, paging and display."""

    session: str
    seq: int
    key: str
    kind: str
    role: str
    turn: int
    text: str
    payload: Mapping[str, Any] | None
    bytes: int
    created: float
    updated: float


class Frame(NamedTuple):
    """What the engine tells views after folding a chunk, or what a read carries.

    A live text frame has `delta=True` and `part` is only the new text; `n` is the
    row's length AFTER the frame, which is how a view detects duplicates and gaps. A
    read (or any replacement) has `delta=False` and `part` is the whole text. A tuple,
    because one is made per streamed token.
    """

    session: str
    key: str
    seq: int
    kind: str
    turn: int
    part: str
    delta: bool
    n: int
    payload: Mapping[str, Any] | None = None

    @classmethod
    def read(cls, row: Row) -> Frame:
        """The frame that replays a stored row: the whole text, no delta."""
        return cls(
            row.session,
            row.key,
            row.seq,
            row.kind,
            row.turn,
            row.text,
            False,
            len(row.text),
            row.payload,
        )


@dataclass(frozen=True, slots=True)
class Page:
    """Consecutive rows, oldest first, bounded by a row count and a byte budget."""

    rows: tuple[Row, ...]
    has_more: bool
    """True when rows exist beyond this page in the direction it was read."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A stored session: who runs it, where, and what the agent last told us about it."""

    id: str
    agent: str
    command: tuple[str, ...]
    cwd: str
    title: str | None
    status: str
    agent_session_id: str | None
    created: float
    updated: float
    modes: Mapping[str, Any] | None
    config_options: tuple[Mapping[str, Any], ...] | None
    commands: tuple[Mapping[str, Any], ...] | None
    usage: Mapping[str, Any] | None
    info: Mapping[str, Any] | None
    unread: bool
    """True when the session did something (a row grew, a turn ended) the user has not seen."""
    draft: str
    """The prompt the user was writing for this session, not sent yet."""
