"""The folding rules: pure functions that decide where a streamed chunk belongs.

Real agents stream a message as thousands of 3-4 character chunks, usually with no
`messageId`, sometimes re-sending what they already sent (a snapshot of the whole
message, a tail that overlaps what was sent, a whole-block recap). These rules fold
all of that into ONE row per logical message. They do no I/O, so every rule is unit
and property tested on its own; `store.store.Store` applies them and persists rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from store.text import normalise_ws, solid_len

MIN_OVERLAP = 16
"""Rule 2: an overlap shorter than this between a row's end and a chunk's start is a coincidence."""

RECAP_FLOOR = 24
"""Rule 3: texts shorter than this are never folded as recaps ("ok" twice is two messages)."""

RECAP_COVERAGE = 0.6
"""Rule 3: the shorter text must cover at least this share of the longer one."""

RECAP_LOOKBACK = 8
"""Rule 3: how many recent rows of the turn an id-less chunk is compared with."""

TEXT_KINDS = ("agent", "thought", "user")


class Growth(NamedTuple):
    """What folding a chunk does to a row's text: append `text`, or replace it all.
    (A tuple, because one is made per streamed token.)"""

    text: str
    replace: bool = False

    @property
    def is_empty(self) -> bool:
        """True when the row does not change."""
        return not self.replace and not self.text


NO_GROWTH = Growth("")


# Rule 2: what is new in an incoming text ------------------------------------------------


def overlap(held: str, incoming: str, minimum: int = MIN_OVERLAP) -> int:
    """Length of the longest overlap of at least `minimum` characters between the end of
    `held` and the start of `incoming`, or 0 when there is none.

    Candidates are found with `str.find` on the incoming head, leftmost first, so the
    first one that matches is the longest.
    """
    limit = min(len(held), len(incoming))
    if limit < minimum:
        return 0
    probe = incoming[:minimum]
    position = held.find(probe, len(held) - limit)
    while position != -1:
        size = len(held) - position
        if held[position:] == incoming[:size]:
            return size
        position = held.find(probe, position + 1)
    return 0


def same_but_whitespace(held: str, incoming: str, held_solid: int | None = None) -> bool:
    """True when the two texts are equal once whitespace runs are collapsed and ends stripped.

    `held_solid` (the held text's `solid_len`) lets the caller skip the O(n) pass
    over a long held text for the many chunks whose solid length differs.
    """
    if held_solid is None:
        held_solid = solid_len(held)
    if solid_len(incoming) != held_solid:
        return False
    return held.split() == incoming.split()


def new_text(held: str, incoming: str, held_solid: int | None = None) -> str:
    """Rule 2: the part of `incoming` that the row holding `held` does not have yet.

    - If `incoming` starts with everything held, it is a snapshot: only its tail is new
      (an exact re-send therefore adds nothing).
    - If it differs from what is held only in whitespace, it is a re-send: nothing.
    - Else the longest overlap of at least 16 characters between the held end and the
      incoming start is stripped.
    - Else the whole chunk is a genuine delta.
    """
    if incoming.startswith(held):
        return incoming[len(held) :]
    if held and same_but_whitespace(held, incoming, held_solid):
        return ""
    return incoming[overlap(held, incoming) :]


def is_plain_delta(incoming: str, held_len: int, held_solid: int, incoming_solid: int) -> bool:
    """True when rule 2 can only call `incoming` a genuine delta, decided without the held text.

    A chunk shorter than what is held cannot be a snapshot; one shorter than the
    minimum overlap cannot overlap; one whose solid length (`incoming_solid`) differs
    from the held one cannot be a whitespace re-send. This is the hot path: a 3-4
    character token delta never needs the row's text joined.
    """
    return len(incoming) < held_len and len(incoming) < MIN_OVERLAP and incoming_solid != held_solid


# Rule 3: id-less recaps -------------------------------------------------------------------


def is_recap(row_text: str, incoming: str) -> bool:
    """Rule 3: True when an id-less `incoming` repeats the message held in `row_text`.

    The whitespace-normalised texts must be equal, or one must contain the other with
    the shorter covering at least 60% of the longer (either direction, so "the same
    block, extended" qualifies). Never below 24 characters: a short text is contained
    in almost every long one, and "ok" twice is two messages. Never fold on a guess.
    """
    if len(incoming) < RECAP_FLOOR or len(row_text) < RECAP_FLOOR:
        return False
    a, b = normalise_ws(row_text), normalise_ws(incoming)
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    if len(shorter) < RECAP_FLOOR:
        return False
    if a == b:
        return True
    return len(shorter) >= RECAP_COVERAGE * len(longer) and shorter in longer


def fold_recap(row_text: str, incoming: str) -> Growth:
    """How a recap changes the row it repeats: the longer text wins.

    A recap that the row already covers adds nothing; one that extends the row's text
    appends its tail; one that wraps the row's text in more replaces it.
    """
    if len(normalise_ws(incoming)) <= len(normalise_ws(row_text)):
        return NO_GROWTH
    if incoming.startswith(row_text):
        return Growth(incoming[len(row_text) :])
    return Growth(incoming, replace=True)


@dataclass(frozen=True, slots=True)
class RecentRow:
    """What rule 3 needs to know of a recent row."""

    key: str
    kind: str
    turn: int
    text: str


def recap_target(recent: Iterable[RecentRow], kind: str, turn: int, incoming: str) -> str | None:
    """The key of the newest recent same-kind row of this turn that `incoming` repeats, if any.

    `recent` is newest first and bounded by the caller (RECAP_LOOKBACK rows).
    """
    if len(incoming) < RECAP_FLOOR:
        return None
    for row in recent:
        if row.kind == kind and row.turn == turn and is_recap(row.text, incoming):
            return row.key
    return None


# Keys: one key = one row = one bubble -------------------------------------------------------


def message_key(kind: str, turn: int, message_id: str) -> str:
    """Key of a message the agent named: namespaced by kind (a thought and a reply may share
    an id) and by turn (some agents reuse ids across turns)."""
    return f"{kind}:{turn}:{message_id}"


def anonymous_key(kind: str, turn: int, seq: int) -> str:
    """Key of a row with no agent id: its kind, turn and the seq it was opened at."""
    return f"{kind}:{turn}:@{seq}"


def tool_key(tool_call_id: str) -> str:
    """Key of a tool call row: every update of one tool call id merges into it."""
    return f"tool:{tool_call_id}"


def shell_key(run_id: str) -> str:
    """Key of the row of a command the user ran: each update of the run replaces it (a
    run goes on across turns, so its key holds no turn)."""
    return f"shell:{run_id}"


def plan_key(turn: int) -> str:
    """Key of a turn's plan row: each `plan` update replaces the plan of its turn in place."""
    return f"plan:{turn}"


@dataclass(frozen=True, slots=True)
class OpenRow:
    """The session's open text row, as the adjacency rule sees it."""

    key: str
    kind: str
    turn: int
    named: bool
    """True when the agent gave the row a messageId."""


def text_route(
    open_row: OpenRow | None, kind: str, turn: int, message_id: str | None
) -> str | None:
    """Rule 1 and adjacency: the key a text chunk folds into, or None when it starts a row.

    A chunk with a messageId belongs to `message_key(kind, turn, id)` wherever that row
    is. A chunk without one extends the open row only when that row has no id either
    and is of the same kind in the same turn; the open row is closed (the caller sets
    it to None) as soon as any other kind or update type arrives. So an id-less chunk
    from an agent that does send ids is never glued onto an id'd row.
    """
    if message_id is not None:
        return message_key(kind, turn, message_id)
    if (
        open_row is not None
        and not open_row.named
        and open_row.kind == kind
        and open_row.turn == turn
    ):
        return open_row.key
    return None


# Rule 4: tool calls and plans -----------------------------------------------------------------

_NOT_STORED = frozenset({"sessionUpdate"})


def merge_tool(existing: Mapping[str, Any] | None, update: Mapping[str, Any]) -> dict[str, Any]:
    """Rule 4: fold a `tool_call` or `tool_call_update` into the tool row's payload.

    An update that arrives before its start creates the payload; a repeated start
    merges like an update and never adds a row. Fields the update carries replace the
    held ones (so `content` and `locations` lists are replaced whole, never appended);
    fields it omits, or sends as null, are kept; `_meta` objects are merged key by key.
    """
    merged = dict(existing or {})
    for name, value in update.items():
        if name in _NOT_STORED or value is None:
            continue
        held = merged.get(name)
        if name == "_meta" and isinstance(held, dict) and isinstance(value, Mapping):
            merged[name] = {**held, **value}
        else:
            merged[name] = value
    return merged


def plan_payload(
    entries: object, revision: int = 0, author: str = "agent", explanation: object = None
) -> dict[str, Any]:
    """Rule 4: a `plan` update is always the complete list; it replaces the turn's plan.
    Only entries that are objects are kept (an agent sent a list of numbers). The session's
    plan is whichever source wrote last: the agent's own updates (`agent`), or Cockpit's
    plan tool and the user, through Cockpit; each write takes the next `revision`."""
    listed = entries if isinstance(entries, list) else []
    payload: dict[str, Any] = {
        "entries": [dict(entry) for entry in listed if isinstance(entry, Mapping)],
        "revision": revision,
        "author": author,
    }
    if isinstance(explanation, str) and explanation:
        payload["explanation"] = explanation
    return payload


# Rule 5: the session/load replay window ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplayWindow:
    """Rule 5: what to do with history an agent replays on `session/load`.

    When the store already holds the session's transcript the replay is dropped (the
    store is the truth and a replay would duplicate every message); when it holds
    nothing, the replay IS the transcript and is kept, each replayed user message
    opening a turn. The window lasts until the agent answers the load; what it replays
    after that is told by what it is (`store.replay`).
    """

    keep: bool

    @classmethod
    def decide(cls, stored_rows: int) -> ReplayWindow:
        """Keep the replay only when no row of the session is stored."""
        return cls(keep=stored_rows == 0)

    def turn_for(self, kind: str, extends_open_row: bool, turn: int) -> int:
        """The turn a kept replayed chunk belongs to: a user message that does not continue
        the open user row starts the next turn."""
        if self.keep and kind == "user" and not extends_open_row:
            return turn + 1
        return turn
