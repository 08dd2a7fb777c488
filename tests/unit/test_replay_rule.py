"""Rule 5 whatever the timing: the recital that tells a replayed update from a live one by
what it is (`store.replay`), on its own, without a store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from store.replay import (
    RECITAL_FLOOR,
    Recital,
    StoredText,
    Verdict,
    stored_prompt,
    stored_text,
)
from tests.support.late_replay import TURNS, replayed_updates

REPLAY, UNSURE, LIVE = Verdict.REPLAY, Verdict.UNSURE, Verdict.LIVE


@dataclass
class Transcript:
    """A stored transcript as the recital sees it: user messages, and each turn's replies,
    thoughts, plans and tool calls (by id)."""

    rows: list[tuple[int, str, str, Any]] = field(default_factory=list)
    """(turn, kind, text, payload) in seq order."""

    def add(self, turn: int, kind: str, text: str = "", payload: Any = None) -> None:
        self.rows.append((turn, kind, text, payload))

    def recital(self) -> Recital:
        prompts = [
            stored_prompt(seq, turn, text)
            for seq, (turn, kind, text, _) in enumerate(self.rows, 1)
            if kind == "user"
        ]
        return Recital(prompts, end=len(self.rows) + 1)

    def texts(self, turn: int) -> list[StoredText]:
        return [
            stored_text(seq, kind, text, payload)
            for seq, (row_turn, kind, text, payload) in enumerate(self.rows, 1)
            if row_turn == turn and kind in ("agent", "thought", "plan")
        ]

    def tool_turn(self, tool_call_id: str) -> int | None:
        turns = [
            t for t, kind, _, payload in self.rows if kind == "tool" and payload == tool_call_id
        ]
        return turns[0] if turns else None

    def judge(self, recital: Recital, kind: str, value: Any = "") -> Verdict:
        """Judge one update as the store does: the recited turn's texts handed over first."""
        if kind in ("agent", "thought", "plan") and (wanted := recital.wants()) is not None:
            turn, first, end = wanted
            recital.load(turn, [t for t in self.texts(turn) if first <= t.seq < end])
        if kind == "tool":
            return recital.judge_tool(self.tool_turn(value))
        if kind == "plan":
            return recital.judge_plan(value)
        return recital.judge_text(kind, value)


def gemini_history() -> Transcript:
    """The capture's six turns as Cockpit stored them (tests/support/late_replay.py)."""
    stored = Transcript()
    for turn, (prompt, reply, tool_call_id) in enumerate(TURNS, 1):
        stored.add(turn, "user", prompt)
        if tool_call_id:
            stored.add(turn, "tool", payload=tool_call_id)
            stored.add(turn, "permission", "Allowed once")
        stored.add(turn, "agent", reply)
    return stored


def as_update(update: dict[str, Any]) -> tuple[str, Any]:
    kinds = {"user_message_chunk": "user", "agent_message_chunk": "agent"}
    if update["sessionUpdate"] in kinds:
        return kinds[update["sessionUpdate"]], update["content"]["text"]
    return "tool", update["toolCallId"]


# The capture ---------------------------------------------------------------------------------


def test_the_captured_late_replay_is_replay_and_the_live_reply_is_live() -> None:
    stored = gemini_history()
    recital = stored.recital()
    updates = [u for u in replayed_updates() if u["sessionUpdate"] != "available_commands_update"]
    live = "".join(u["content"]["text"] for u in updates[-11:])
    assert live == "You said: romeo after close [scenario:echo]"
    verdicts = [stored.judge(recital, *as_update(update)) for update in updates[:-10]]
    # gemini's session context decides nothing (no prompt of the store's came yet); every
    # other replayed update recites the stored turns; the live reply's first piece is live.
    assert verdicts == [UNSURE, *[REPLAY] * 16, LIVE]
    assert recital.turn == 6


# Prompts -----------------------------------------------------------------------------------


def test_a_prompt_replayed_in_pieces_is_told_once_it_is_long_enough() -> None:
    stored = Transcript()
    stored.add(1, "user", "kilo slow reply [scenario:text]")
    stored.add(1, "agent", "A table.")
    recital = stored.recital()
    assert stored.judge(recital, "user", "kilo slow ") == UNSURE
    assert stored.judge(recital, "user", "reply [scenario:text]") == REPLAY
    assert recital.turn == 1
    assert stored.judge(recital, "agent", "A table.") == REPLAY


def test_a_prompt_replayed_with_what_it_mentioned_is_that_prompt() -> None:
    stored = Transcript()
    stored.add(1, "user", "explain @src/main.py to me in detail")
    recital = stored.recital()
    assert stored.judge(
        recital, "user", "explain @src/main.py to me in detail\n<file>x</file>"
    ) == (REPLAY)
    assert recital.turn == 1


def test_a_short_prompt_must_be_replayed_whole() -> None:
    stored = Transcript()
    stored.add(1, "user", "hi")
    stored.add(1, "agent", "Hello! What shall we do today?")
    recital = stored.recital()
    assert stored.judge(recital, "user", "hi there") == UNSURE
    assert recital.turn is None
    assert stored.judge(recital, "user", "hi") == REPLAY
    assert recital.turn == 1


def test_user_messages_the_store_never_held_are_replay_inside_a_recited_turn() -> None:
    stored = gemini_history()
    recital = stored.recital()
    assert stored.judge(recital, "user", "<session_context>...</session_context>") == UNSURE
    assert stored.judge(recital, "user", TURNS[3][0]) == REPLAY
    assert stored.judge(recital, "user", "[Function Response: run_shell_command]") == REPLAY
    assert recital.turn == 4


def test_the_recital_only_moves_forward() -> None:
    stored = gemini_history()
    recital = stored.recital()
    for prompt, reply, _ in TURNS[:3]:
        assert stored.judge(recital, "user", prompt) == REPLAY
        assert stored.judge(recital, "agent", reply) == REPLAY
    # The first turn's prompt again is not that turn: the agent recites in order. Its
    # reply then is live, though the store holds one equal to it.
    assert stored.judge(recital, "user", TURNS[0][0]) == REPLAY
    assert recital.turn == 3
    assert stored.judge(recital, "agent", TURNS[0][1]) == LIVE


def test_a_turn_the_agent_does_not_know_is_skipped() -> None:
    stored = gemini_history()
    recital = stored.recital()
    assert stored.judge(recital, "user", TURNS[4][0]) == REPLAY
    assert recital.turn == 5
    assert stored.judge(recital, "agent", TURNS[4][1]) == REPLAY


# Replies and thoughts ----------------------------------------------------------------------


def test_a_reply_before_any_recited_prompt_is_live_though_it_equals_a_stored_one() -> None:
    stored = gemini_history()
    recital = stored.recital()
    assert stored.judge(recital, "agent", TURNS[0][1]) == LIVE


def test_a_reply_recited_in_pieces_is_replay_and_what_goes_beyond_it_is_live() -> None:
    stored = gemini_history()
    recital = stored.recital()
    prompt, table, _ = TURNS[1]
    assert stored.judge(recital, "user", prompt) == REPLAY
    head = floor_reached(table)
    assert stored.judge(recital, "agent", table[: head - 1]) == LIVE  # too short to tell
    assert stored.judge(recital, "agent", table[:head]) == REPLAY
    for start in range(head, len(table), 5):
        assert stored.judge(recital, "agent", table[start : start + 5]) == REPLAY
    assert stored.judge(recital, "agent", "\n\n") == UNSURE  # whitespace decides nothing
    assert stored.judge(recital, "agent", "More") == LIVE


def test_a_reply_recited_with_other_whitespace_is_replay() -> None:
    stored = gemini_history()
    recital = stored.recital()
    prompt, table, _ = TURNS[1]
    assert stored.judge(recital, "user", prompt) == REPLAY
    assert stored.judge(recital, "agent", " ".join(table.split())) == REPLAY


def test_a_short_first_piece_never_begins_a_recital() -> None:
    stored = gemini_history()
    recital = stored.recital()
    prompt, table, _ = TURNS[1]
    assert stored.judge(recital, "user", prompt) == REPLAY
    assert stored.judge(recital, "agent", table[:4]) == LIVE


def test_a_thought_is_recited_as_its_own_kind() -> None:
    stored = Transcript()
    stored.add(1, "user", "think about it")
    stored.add(1, "thought", "Considering the options carefully here.")
    stored.add(1, "agent", "Considering the options carefully here.")
    recital = stored.recital()
    assert stored.judge(recital, "user", "think about it") == REPLAY
    assert stored.judge(recital, "thought", "Considering the options carefully here.") == REPLAY
    assert stored.judge(recital, "agent", "Considering the options carefully here.") == REPLAY
    assert stored.judge(recital, "thought", "Considering the options carefully here.") == LIVE


# Tool calls and plans ------------------------------------------------------------------------


def test_tool_calls_are_replay_when_stored_in_the_recited_turn_or_a_later_one() -> None:
    stored = gemini_history()
    papa, alfa = TURNS[3][2], TURNS[4][2]
    recital = stored.recital()
    assert stored.judge(recital, "tool", papa) == LIVE  # no prompt recited yet
    assert stored.judge(recital, "user", TURNS[3][0]) == REPLAY
    assert stored.judge(recital, "tool", papa) == REPLAY
    assert stored.judge(recital, "tool", alfa) == REPLAY  # gemini recites it a turn early
    assert stored.judge(recital, "tool", "call_new") == LIVE
    assert stored.judge(recital, "user", TURNS[4][0]) == REPLAY
    assert stored.judge(recital, "tool", papa) == LIVE  # an id an earlier turn used


def test_a_plan_is_replay_when_it_is_the_recited_turns_plan() -> None:
    entries = [{"content": "Read the code", "status": "completed", "priority": "high"}]
    stored = Transcript()
    stored.add(1, "user", "plan it")
    stored.add(1, "plan", payload={"entries": entries})
    recital = stored.recital()
    assert stored.judge(recital, "plan", entries) == LIVE
    assert stored.judge(recital, "user", "plan it") == REPLAY
    assert stored.judge(recital, "plan", entries) == REPLAY
    assert stored.judge(recital, "plan", [{**entries[0], "status": "pending"}]) == LIVE


def test_the_recited_turn_is_asked_for_by_its_seqs() -> None:
    stored = gemini_history()
    recital = stored.recital()
    assert recital.wants() is None
    stored.judge(recital, "user", TURNS[3][0])
    assert recital.wants() == (4, 7, 11)  # the rows from papa's prompt to alfa's
    stored.judge(recital, "agent", TURNS[3][1])
    assert recital.wants() is None
    stored.judge(recital, "user", TURNS[5][0])
    assert recital.wants() == (6, 15, 17)  # the last turn ends where history does


# Properties ---------------------------------------------------------------------------------

words = st.text("abcdefgh", min_size=1, max_size=6)
texts = st.lists(words, min_size=1, max_size=12).map(" ".join)


def floor_reached(text: str) -> int:
    """The shortest start of `text` that holds RECITAL_FLOOR characters that are not
    whitespace (all of it when it holds fewer)."""
    count = 0
    for index, character in enumerate(text, 1):
        count += not character.isspace()
        if count >= RECITAL_FLOOR:
            return index
    return len(text)


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[Transcript, list[tuple[str, Any]]]:
    """A stored transcript and a faithful replay of it: each prompt whole, each reply or
    thought begun whole or with at least RECITAL_FLOOR characters and then in pieces of any
    size (whitespace laid out anew), each tool call by its id."""
    stored = Transcript()
    replay: list[tuple[str, Any]] = []
    for turn in range(1, draw(st.integers(1, 5)) + 1):
        prompt = draw(texts)
        stored.add(turn, "user", prompt)
        replay.append(("user", prompt))
        for number in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["agent", "thought", "tool"]))
            if kind == "tool":
                stored.add(turn, "tool", payload=f"call-{turn}-{number}")
                replay.append(("tool", f"call-{turn}-{number}"))
                continue
            text = draw(texts)
            stored.add(turn, kind, text)
            recited = " ".join(text.split())
            first = draw(st.integers(floor_reached(recited), len(recited)))
            replay.append((kind, recited[:first]))
            rest = recited[first:]
            while rest:
                size = draw(st.integers(1, 6))
                replay.append((kind, rest[:size]))
                rest = rest[size:]
    return stored, replay


def verdicts(stored: Transcript, updates: Sequence[tuple[str, Any]]) -> list[Verdict]:
    recital = stored.recital()
    return [stored.judge(recital, kind, value) for kind, value in updates]


@given(transcripts())
def test_a_faithful_replay_is_never_live(case: tuple[Transcript, list[tuple[str, Any]]]) -> None:
    stored, replay = case
    judged = verdicts(stored, replay)
    assert LIVE not in judged
    assert judged[-1] != UNSURE or replay[-1][1].strip() == ""


@given(transcripts(), st.data())
def test_a_live_reply_after_a_whole_replay_is_live_even_when_it_repeats_one(
    case: tuple[Transcript, list[tuple[str, Any]]], data: st.DataObject
) -> None:
    stored, replay = case
    old = [(kind, text) for _, kind, text, _ in stored.rows if kind in ("agent", "thought")]
    kind, text = data.draw(st.sampled_from(old) if old else st.tuples(st.just("agent"), texts))
    pieces = data.draw(st.sampled_from([[text], [text[:4], text[4:]]]))
    recital = stored.recital()
    for update in replay:
        stored.judge(recital, *update)
    first = next(piece for piece in pieces if piece.strip())
    assert stored.judge(recital, kind, first) == LIVE


@given(transcripts(), st.data())
def test_a_live_turn_with_no_replay_before_it_is_live(
    case: tuple[Transcript, list[tuple[str, Any]]], data: st.DataObject
) -> None:
    stored, replay = case
    content = [(kind, value) for kind, value in replay if kind != "user" and value.strip()]
    kind, value = data.draw(st.sampled_from(content or [("agent", "x")]))
    assert verdicts(stored, [(kind, value)]) == [LIVE]
