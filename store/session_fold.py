"""One session's fold: the folding rules applied to a stream of chunks, in memory, no I/O.

`SessionFold` decides which row each chunk belongs to, grows that row and returns the
frames for views and the rows that must be written now. The `Store` wraps it with the
database: it loads a named row the fold asks for (`needs`), writes what it returns,
and flushes what stays unsaved on a timer.
"""

from __future__ import annotations

import json
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping
from typing import Any, Final

from store.chunks import (
    ASIDE_KINDS,
    META_UPDATES,
    NOTE_KINDS,
    PLAN_UPDATE,
    SHELL_UPDATE,
    TEXT_UPDATES,
    TOOL_UPDATES,
    Chunk,
)
from store.fold_rules import (
    RECAP_FLOOR,
    RECAP_LOOKBACK,
    TEXT_KINDS,
    Growth,
    OpenRow,
    RecentRow,
    ReplayWindow,
    anonymous_key,
    fold_recap,
    is_plain_delta,
    merge_tool,
    message_key,
    new_text,
    plan_key,
    plan_payload,
    recap_target,
    shell_key,
    text_route,
    tool_key,
)
from store.model import ROLE_OF_KIND, Frame, Row
from store.replay import Recital, StoredPrompt, Verdict
from store.text import clean_data, clean_text, solid_len, utf8_len

NAMED_ROWS: Final = 256
"""Named rows (messages with ids, tool calls, plans) kept in memory; older ones are reloaded."""

_TURN_JUDGED: Final = frozenset({"agent_message_chunk", "agent_thought_chunk", PLAN_UPDATE})
"""Updates the recital judges against the replies, thoughts and plans of a stored turn."""

UNKNOWN_UPDATE: Final = (
    "The agent sent an update Cockpit does not understand ({name!r}); it is kept here as received."
)


def dump_json(value: Any) -> str:
    """The stored form of a payload: compact, ASCII-only (lone surrogates survive as escapes)."""
    return json.dumps(value, separators=(",", ":"), default=repr)


class LiveRow:
    """A row as the writer holds it while it may still change.

    The text is a list of parts, so a 4-character delta is an append, not a copy of the
    whole message; `version` counts changes and `saved` is the last version written.
    """

    __slots__ = (
        "created",
        "key",
        "kind",
        "length",
        "named",
        "parts",
        "payload",
        "saved",
        "seq",
        "session",
        "solid",
        "turn",
        "updated",
        "version",
    )

    def __init__(
        self, session: str, seq: int, key: str, kind: str, turn: int, named: bool, now: float
    ) -> None:
        self.session = session
        self.seq = seq
        self.key = key
        self.kind = kind
        self.turn = turn
        self.named = named
        self.parts: list[str] = []
        self.length = 0
        self.solid = 0
        self.payload: dict[str, Any] | None = None
        self.created = now
        self.updated = now
        self.version = 0
        self.saved = -1

    @classmethod
    def from_row(cls, row: Row) -> LiveRow:
        """A stored row brought back into memory to be folded into again."""
        live = cls(row.session, row.seq, row.key, row.kind, row.turn, True, row.created)
        if row.text:
            live.parts = [row.text]
        live.length = len(row.text)
        live.solid = solid_len(row.text)
        live.payload = dict(row.payload) if row.payload is not None else None
        live.updated = row.updated
        live.saved = 0
        return live

    @property
    def text(self) -> str:
        """The whole text (joined once, then kept joined)."""
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return self.parts[0] if self.parts else ""

    @property
    def unsaved(self) -> bool:
        """True when this row changed since it was last written."""
        return self.version > self.saved

    def grow(self, growth: Growth, now: float, solid: int | None = None) -> None:
        """Append to, or replace, the text; count the change. `solid` is the growth's
        `solid_len` when the caller already knows it."""
        if solid is None:
            solid = solid_len(growth.text)
        if growth.replace:
            self.parts = [growth.text]
            self.length = len(growth.text)
            self.solid = solid
        else:
            self.parts.append(growth.text)
            self.length += len(growth.text)
            self.solid += solid
        self.touch(now)

    def touch(self, now: float) -> None:
        """Count a change (of the text or the payload)."""
        self.version += 1
        self.updated = now

    def frame(self, growth: Growth | None = None) -> Frame:
        """The frame announcing this row's latest change (the whole row unless `growth` appends)."""
        if growth is not None and not growth.replace:
            return Frame(
                self.session,
                self.key,
                self.seq,
                self.kind,
                self.turn,
                growth.text,
                True,
                self.length,
                None,
            )
        return Frame(
            self.session,
            self.key,
            self.seq,
            self.kind,
            self.turn,
            self.text,
            False,
            self.length,
            self.payload,
        )

    def snapshot(self) -> Row:
        """The row as it stands now."""
        text = self.text
        payload = self.payload
        size = utf8_len(text) + (len(dump_json(payload)) if payload is not None else 0)
        return Row(
            self.session,
            self.seq,
            self.key,
            self.kind,
            ROLE_OF_KIND.get(self.kind, "system"),
            self.turn,
            text,
            payload,
            size,
            self.created,
            self.updated,
        )


class SessionFold:
    """The in-memory state that folds one session's chunks into rows."""

    def __init__(
        self, session: str, next_seq: int = 1, turn: int = 0, plan_revision: int = 0
    ) -> None:
        self.session = session
        self.next_seq = next_seq
        self.turn = turn
        self.plan_revision = plan_revision
        """The revision of the session's newest plan: the next plan write takes the next."""
        self.open: LiveRow | None = None
        self._open_info: OpenRow | None = None
        self._named: OrderedDict[str, LiveRow] = OrderedDict()
        self._recent: deque[LiveRow] = deque(maxlen=RECAP_LOOKBACK)
        self.replay: ReplayWindow | None = None
        """The window of a `session/load` until the agent answers it."""
        self.recital: Recital | None = None
        """Where the agent's replay stands in the stored transcript, from a reload that
        drops it until the replay is over: past the answer, it tells a late replay."""
        self.held: list[Chunk] = []
        """Updates of a late replay's window that nothing decided yet (`Verdict.UNSURE`)."""
        self.unsaved: dict[int, LiveRow] = {}
        """Rows changed since they were last written, by seq."""

    # -- rows ---------------------------------------------------------------------------------

    def _new_row(self, kind: str, key: str | None, named: bool, now: float) -> LiveRow:
        seq = self.next_seq
        self.next_seq += 1
        row = LiveRow(
            self.session,
            seq,
            key or anonymous_key(kind, self.turn, seq),
            kind,
            self.turn,
            named,
            now,
        )
        if named:
            self.adopt_live(row)
        return row

    def adopt(self, row: Row) -> None:
        """Bring a stored named row into memory (the Store does this when `needs` asks);
        a row already in memory is newer than the stored one and stays."""
        if row.key not in self._named:
            self.adopt_live(LiveRow.from_row(row))

    def adopt_live(self, row: LiveRow) -> None:
        """Remember a named row, forgetting the least recently used saved one past the bound."""
        self._named[row.key] = row
        self._named.move_to_end(row.key)
        while len(self._named) > NAMED_ROWS:
            oldest = next(iter(self._named.values()))
            if oldest.unsaved:
                break
            self._named.popitem(last=False)

    def _changed(self, row: LiveRow) -> None:
        self.unsaved[row.seq] = row

    def settle(self, row: LiveRow, version: int) -> None:
        """Record that `version` of `row` is written."""
        row.saved = max(row.saved, version)
        if not row.unsaved and self.unsaved.get(row.seq) is row:
            del self.unsaved[row.seq]

    def seal(self) -> LiveRow | None:
        """Close the open row; return it when it holds unwritten changes."""
        row = self.open
        if row is None:
            return None
        self.open = None
        self._open_info = None
        return row if row.unsaved else None

    def _make_open(self, row: LiveRow) -> LiveRow | None:
        if row is self.open:
            return None
        sealed = self.seal()
        self.open = row
        self._open_info = OpenRow(row.key, row.kind, row.turn, row.named)
        if row.kind in TEXT_KINDS and row not in self._recent:
            self._recent.append(row)
        return sealed

    # -- what a chunk needs -------------------------------------------------------------------

    def _text_key(self, kind: str, chunk: Chunk) -> str | None:
        return text_route(self._open_info, kind, self._turn_for(kind, chunk), chunk.message_id)

    def _turn_for(self, kind: str, chunk: Chunk) -> int:
        if self.replay is None:
            return self.turn
        key = text_route(self._open_info, kind, self.turn, chunk.message_id)
        # A chunk with a messageId continues the open row only when it carries that row's
        # id: a new id is a new message, and a replayed user message opens the next turn.
        open_key = self._open_info.key if self._open_info is not None else None
        extends = key is not None and (chunk.message_id is None or key == open_key)
        return self.replay.turn_for(kind, extends, self.turn)

    def needs(self, chunk: Chunk) -> str | None:
        """The key of a stored row this chunk folds into that is not in memory, if any.

        Only named rows (a messageId, a tool call, a plan) can be found again once they
        left memory; the Store loads the row and passes it to `adopt` before `apply`.
        """
        kind = TEXT_UPDATES.get(chunk.update)
        if kind is not None and chunk.message_id is None:
            return None  # the hot path: an id-less token folds into memory or a new row
        if self.dropping(chunk):
            return None
        if kind is not None:
            key = self._text_key(kind, chunk)
        elif chunk.update in TOOL_UPDATES:
            key = tool_key(chunk.tool_call_id or "")
        elif chunk.update == PLAN_UPDATE:
            key = plan_key(self.turn)
        elif chunk.update == SHELL_UPDATE and chunk.message_id is not None:
            key = shell_key(chunk.message_id)
        elif chunk.update in NOTE_KINDS and chunk.message_id is not None:
            key = self._note_key(chunk)
        else:
            key = None
        return key if key is not None and key not in self._named else None

    def dropping(self, chunk: Chunk) -> bool:
        """True while a replay the store already holds is being dropped (rule 5). The user's
        own commands are never the agent's replay."""
        return (
            self.replay is not None
            and not self.replay.keep
            and chunk.update not in META_UPDATES
            and chunk.update != SHELL_UPDATE
            and not (chunk.from_cockpit and chunk.update == PLAN_UPDATE)
        )

    # -- applying -----------------------------------------------------------------------------

    def recital_wants(self, chunk: Chunk) -> tuple[int, int, int] | None:
        """(turn, first seq, end seq) of the stored turn whose replies, thoughts and plans
        the recital needs to judge this chunk; the Store loads them and passes them to
        `Recital.load` before `apply`."""
        if self.recital is None or chunk.update not in _TURN_JUDGED or chunk.from_cockpit:
            return None
        return self.recital.wants()

    @staticmethod
    def _recited(chunk: Chunk) -> bool:
        """True for what an agent's replay may hold: its content, not session metadata
        nor Cockpit's own rows."""
        return not (
            chunk.update in META_UPDATES
            or chunk.update in NOTE_KINDS
            or chunk.update == SHELL_UPDATE
            or chunk.from_cockpit
        )

    def apply(self, chunk: Chunk, now: float) -> tuple[list[Frame], list[LiveRow]]:
        """Fold one chunk. Returns the frames for views and the rows to write now.

        The open row (a streaming message, or a tool call receiving its updates) is
        written when it seals, which only the agent's content stream does (text of another
        kind or id, a tool call, a plan); plans, notices and decisions are durable facts
        written at once. Other changed rows stay in `unsaved` for the Store's flush timer.

        While a reload's replay is dropped (rule 5), nothing of it is folded: until the
        agent answers `session/load`, all of it; after, what the recital judges replay.
        """
        if self.dropping(chunk):
            if self.recital is not None and self._recited(chunk):
                self._judge(chunk)  # the recital follows along: a late part goes on from here
            return [], []
        if self.recital is None or not self._recited(chunk):
            return self._fold(chunk, now)
        if chunk.update in TEXT_UPDATES and not chunk.text:
            return [], []  # an empty block opener: folded it would change nothing either
        verdict = self._judge(chunk)
        if verdict is Verdict.REPLAY:
            self.held.clear()
            return [], []
        if verdict is Verdict.UNSURE:
            self.held.append(chunk)
            return [], []
        return self.end_late_replay(now, chunk)

    def _judge(self, chunk: Chunk) -> Verdict:
        """The recital's verdict on an update the agent sent while its replay may run."""
        assert self.recital is not None
        kind = TEXT_UPDATES.get(chunk.update)
        if kind is not None:
            return self.recital.judge_text(kind, chunk.text)
        if chunk.update in TOOL_UPDATES:
            row = self._named.get(tool_key(chunk.tool_call_id or ""))
            stored = row is not None and row.seq < self.recital.end
            return self.recital.judge_tool(row.turn if row is not None and stored else None)
        if chunk.update == PLAN_UPDATE:
            return self.recital.judge_plan(plan_payload(chunk.data.get("entries"))["entries"])
        return Verdict.UNSURE  # an update Cockpit does not know: what follows decides

    def end_late_replay(
        self, now: float, chunk: Chunk | None = None
    ) -> tuple[list[Frame], list[LiveRow]]:
        """The replay is over: fold what was held (nothing decided it was replay, so it is
        kept) and then `chunk`, if any, as live. Returns the frames and the rows to write."""
        self.recital = None
        held, self.held = self.held, []
        frames: list[Frame] = []
        rows: list[LiveRow] = []
        for item in [*held, *([chunk] if chunk is not None else [])]:
            more, written = self._fold(item, now)
            frames.extend(more)
            rows.extend(written)
        return frames, _once(*rows)

    def _fold(self, chunk: Chunk, now: float) -> tuple[list[Frame], list[LiveRow]]:
        kind = TEXT_UPDATES.get(chunk.update)
        if kind is not None:
            return self._apply_text(kind, chunk, now)
        if chunk.update in TOOL_UPDATES:
            row = self._named_or_new("tool", tool_key(chunk.tool_call_id or ""), now)
            row.payload = merge_tool(row.payload, chunk.data)
            row.touch(now)
            self._changed(row)
            if chunk.from_cockpit:  # a command's output, a state Cockpit closes: not the agent
                return [row.frame()], []
            sealed = self._make_open(row)
            return [row.frame()], [sealed] if sealed is not None else []
        if chunk.update in META_UPDATES:
            # Session metadata makes no row and never ends the open message: codex-acp sends
            # its command list in the middle of a reply.
            return [], []
        if chunk.update == PLAN_UPDATE:
            self.plan_revision += 1
            row = self._named_or_new("plan", plan_key(self.turn), now)
            author = str(chunk.data.get("author") or "cockpit") if chunk.from_cockpit else "agent"
            row.payload = plan_payload(
                chunk.data.get("entries") or [],
                self.plan_revision,
                author,
                chunk.data.get("explanation") if chunk.from_cockpit else None,
            )
            row.touch(now)
            self._changed(row)
            if chunk.from_cockpit:  # the plan tool or the user: the agent's reply goes on
                return [row.frame()], [row]
            sealed = self.seal()
            return [row.frame()], [sealed, row] if sealed is not None else [row]
        # Cockpit's own rows (notices, errors, decisions, the user's commands) and updates it
        # cannot read are rows of their own that leave the open message open: a notice about
        # a malformed update must not cut the reply it arrived in.
        if chunk.message_id is not None and chunk.update in ASIDE_KINDS:
            # One row per id, replaced in place: a count that grows, a command's output as
            # it comes (a command's key holds no turn: it may run on across one).
            key = (
                shell_key(chunk.message_id)
                if chunk.update == SHELL_UPDATE
                else self._note_key(chunk)
            )
            row = self._named_or_new(chunk.update, key, now)
            row.grow(Growth(chunk.text, replace=True), now)
            row.payload = dict(chunk.data) if chunk.data else None
        elif chunk.update in NOTE_KINDS:
            row = self._note(chunk.update, chunk.text, chunk.data, now)
        else:
            row = self._note("notice", UNKNOWN_UPDATE.format(name=chunk.update), chunk.data, now)
        row.touch(now)
        self._changed(row)
        return [row.frame()], [row]

    def _named_or_new(self, kind: str, key: str, now: float) -> LiveRow:
        row = self._named.get(key)
        if row is None:
            row = self._new_row(kind, key, named=True, now=now)
        else:
            self._named.move_to_end(key)
        return row

    def _note_key(self, chunk: Chunk) -> str:
        """Key of a note with an id: one row per kind, turn and id, replaced in place."""
        return message_key(chunk.update, self.turn, chunk.message_id or "")

    def _note(self, kind: str, text: str, data: Mapping[str, Any], now: float) -> LiveRow:
        row = self._new_row(kind, None, named=False, now=now)
        if text:
            row.parts = [text]
            row.length = len(text)
            row.solid = solid_len(text)
        row.payload = dict(data) if data else None
        return row

    def _apply_text(self, kind: str, chunk: Chunk, now: float) -> tuple[list[Frame], list[LiveRow]]:
        text = chunk.text
        if not text:
            return [], []  # agents open every block with an empty chunk: no empty bubble
        if self.replay is not None:
            self.turn = self._turn_for(kind, chunk)
        key = text_route(self._open_info, kind, self.turn, chunk.message_id)
        row: LiveRow | None = None
        chunk_solid = solid_len(text)
        solid: int | None = chunk_solid
        if key is not None:
            open_row = self.open
            row = open_row if open_row is not None and open_row.key == key else self._named.get(key)
        if row is not None:
            if is_plain_delta(text, row.length, row.solid, chunk_solid):
                growth = Growth(text)
            else:
                growth = Growth(new_text(row.text, text, row.solid))
                solid = None if growth.text != text else solid
        else:
            target = self._recap_of(kind, text) if key is None else None
            if target is not None:
                return self._fold_recap(target, text, now)
            row = self._new_row(kind, key, named=key is not None, now=now)
            growth = Growth(text)
        sealed = self._make_open(row)
        frames: list[Frame] = []
        if not growth.is_empty:
            row.grow(growth, now, solid)
            self._changed(row)
            frames.append(row.frame(growth))
        return frames, [sealed] if sealed is not None else []

    def _fold_recap(self, row: LiveRow, text: str, now: float) -> tuple[list[Frame], list[LiveRow]]:
        """A recap is a whole block re-sent: it folds into the row it repeats and leaves
        no row open, so the text that follows starts a message of its own."""
        sealed = self.seal()
        growth = fold_recap(row.text, text)
        written = [sealed] if sealed is not None else []
        if growth.is_empty:
            return [], written
        row.grow(growth, now)
        self._changed(row)
        return [row.frame(growth)], [*written, row]

    def _recap_of(self, kind: str, text: str) -> LiveRow | None:
        if len(text) < RECAP_FLOOR:
            return None
        recent = [
            RecentRow(row.key, row.kind, row.turn, row.text) for row in reversed(self._recent)
        ]
        target = recap_target(recent, kind, self.turn, text)
        return next((row for row in self._recent if row.key == target), None)

    def begin_turn(
        self, prompt: str, payload: Mapping[str, Any] | None, now: float
    ) -> list[LiveRow]:
        """Open the next turn with the user's prompt; returns the rows to write now.

        A load that never answered (its window left open) must not swallow the turn; a
        late replay's window stays open: its part comes right after this prompt."""
        sealed = self.seal()
        if self.replay is not None:
            self.replay = None
            self.recital = None
        self.turn += 1
        # What a client sent may hold lone surrogates (bytes that were not UTF-8): a row
        # that cannot be written stayed unsaved, and every read of the session failed on it.
        row = self._note("user", clean_text(prompt), clean_data(payload or {}), now)
        row.touch(now)
        self._changed(row)
        return [sealed, row] if sealed is not None else [row]

    def end_turn(self, now: float) -> tuple[list[Frame], list[LiveRow]]:
        """The turn's stop reason has arrived: a late replay comes within the first turn
        after its load, so its window closes; the open message seals. Returns the frames
        and the rows to write now."""
        frames, rows = self.end_late_replay(now)
        return frames, _once(*rows, self.seal())

    def begin_replay(
        self, prompts: Iterable[StoredPrompt], now: float
    ) -> tuple[ReplayWindow, list[LiveRow]]:
        """Open the replay window of a `session/load` (rule 5): when the store holds the
        transcript (`prompts` are its user messages), the replay is dropped and a recital
        follows it. Returns the window and the rows to write now."""
        # A late replay's window left open (its agent died before a prompt) closes first;
        # what it held is kept, its frames unseen until the next read.
        _, rows = self.end_late_replay(now)
        rows = _once(*rows, self.seal())
        self.replay = ReplayWindow.decide(stored_rows=self.next_seq - 1)
        if not self.replay.keep:
            self.recital = Recital(prompts, end=self.next_seq)
        return self.replay, rows

    def load_answered(self) -> LiveRow | None:
        """The agent answered `session/load`: the window closes, but a dropped replay's
        recital goes on, so what the agent replays late is still told by what it is.
        Returns the row it sealed."""
        self.replay = None
        return self.seal()

    def end_replay(self, now: float) -> tuple[list[Frame], list[LiveRow]]:
        """Close the replay window and any late replay's; returns the frames and the rows
        to write now."""
        self.replay = None
        frames, rows = self.end_late_replay(now)
        return frames, _once(*rows, self.seal())


def _once(*rows: LiveRow | None) -> list[LiveRow]:
    """These rows without None and without repeats, in order."""
    return list(dict.fromkeys(row for row in rows if row is not None))
