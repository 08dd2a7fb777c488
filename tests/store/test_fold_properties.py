"""Property tests: any message, split anywhere, re-sent in any mix, folds to itself in one row.

Messages are built from segments that each start with a unique 4-digit index, so no
16-character run repeats: the one ambiguity rule 2 accepts by design (a GENUINE delta
that happens to repeat what the row already ends with) cannot occur, and every re-send
the strategy makes is one the rules are meant to recognise. A message may end in a long
whitespace run (a short reply padded with blank lines); streams never cut inside it, so
that run cannot make a genuine delta look like an overlap either.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from store import Frame, ViewTranscript, note
from store.fold_rules import (
    MIN_OVERLAP,
    NO_GROWTH,
    RECAP_FLOOR,
    fold_recap,
    is_plain_delta,
    is_recap,
    merge_tool,
    new_text,
)
from store.paging import page_length
from store.store import Store
from store.text import normalise_ws, solid_len
from tests.support.helpers import new_session, reply, thought, update

WHITESPACE = " \n\t"
FILLER = st.text(alphabet=" \n\t|-*#abcxyzé表😀", max_size=6)
PADDING = st.text(alphabet=WHITESPACE, max_size=24)
"""Trailing whitespace of a message: with FILLER's at most 30 characters, under the 32 a
whitespace run needs before a 16-character piece of it could repeat."""


@st.composite
def messages(draw: st.DrawFn, first_index: int = 0) -> str:
    few, many = st.integers(min_value=1, max_value=3), st.integers(min_value=1, max_value=40)
    count = draw(st.one_of(few, many))
    body = "".join(f"{first_index + i:04d}{draw(FILLER)}" for i in range(count))
    return body + draw(PADDING)


@st.composite
def whitespace_variants(draw: st.DrawFn, text: str) -> str:
    """`text` with only its whitespace changed: each run resized or swapped for other
    whitespace, the ends stripped or padded (by up to 30 characters, so a short text can
    be long before it is normalised). The words, and so the normalised text, stay."""
    parts = re.split(r"(\s+)", text)  # words at even places, whitespace runs at odd ones
    varied = []
    for place, part in enumerate(parts):
        if place % 2 == 0:
            varied.append(part)
            continue
        edge = (place == 1 and not parts[0]) or (place == len(parts) - 2 and not parts[-1])
        size = (0, 30) if edge else (1, 4)
        varied.append(draw(st.text(WHITESPACE, min_size=size[0], max_size=size[1])))
    head = draw(st.text(WHITESPACE, max_size=3)) if parts[0] else ""
    tail = draw(st.text(WHITESPACE, max_size=30)) if parts[-1] else ""
    return head + "".join(varied) + tail


@dataclass
class Step:
    """One chunk of a stream and the text it should add."""

    text: str
    adds: str


@st.composite
def resends(draw: st.DrawFn, held: str) -> Step | None:
    """A re-send of what the row holds, which adds nothing by rule 2: the same text, the
    same text with its whitespace changed, or the held end (at least 16 characters). None
    when the drawn kind does not apply (a whitespace variant that only extends `held` is a
    snapshot, and a row of 16 characters or fewer has no shorter end to re-send)."""
    how = draw(st.sampled_from(["exact", "whitespace", "whitespace", "end"]))
    if how == "exact":
        return Step(held, "")
    if how == "whitespace":
        text = draw(whitespace_variants(held))
        return None if text.startswith(held) else Step(text, "")
    if len(held) <= MIN_OVERLAP:
        return None
    size = draw(st.integers(min_value=MIN_OVERLAP, max_value=len(held) - 1))
    return Step(held[-size:], "")


@st.composite
def streams(draw: st.DrawFn, message: str) -> list[Step]:
    """`message` as a stream, mixed with re-sends (before any piece and after the last).

    Either genuine pieces (the first at least 16 characters, the rest any length, none
    cut inside the trailing whitespace) mixed with snapshots and tail overlaps; or
    snapshots only, cut anywhere, so a row shorter than 16 characters gets re-sends too.
    """
    steps: list[Step] = []
    held = ""

    def resend() -> None:
        step = draw(resends(held))
        if step is not None:
            steps.append(step)

    if draw(st.booleans()):
        cuts = draw(st.sets(st.integers(min_value=1, max_value=len(message)), max_size=12))
        for cut in sorted(cuts | {len(message)}):
            if held and draw(st.booleans()):
                resend()
            steps.append(Step(message[:cut], message[len(held) : cut]))
            held = message[:cut]
    else:
        words_end = len(message.rstrip())
        cuts = (
            draw(st.sets(st.integers(min_value=MIN_OVERLAP, max_value=words_end), max_size=30))
            if words_end >= MIN_OVERLAP
            else set()
        )
        bounds = [0, *sorted(c for c in cuts if c < len(message)), len(message)]
        for a, b in itertools.pairwise(bounds):
            piece = message[a:b]
            how = (
                draw(st.sampled_from(["none", "none", "resend", "snapshot", "tail"]))
                if held
                else "none"
            )
            if how == "resend":
                resend()
                steps.append(Step(piece, piece))
            elif how == "snapshot":
                steps.append(Step(held + piece, piece))
            elif how == "tail" and len(held) >= MIN_OVERLAP:
                size = draw(st.integers(min_value=MIN_OVERLAP, max_value=len(held)))
                steps.append(Step(held[-size:] + piece, piece))
            else:
                steps.append(Step(piece, piece))
            held += piece
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        resend()
    return steps


@given(st.data())
def test_new_text_rebuilds_any_message(data: st.DataObject) -> None:
    message = data.draw(messages())
    held = ""
    for step in data.draw(streams(message)):
        added = new_text(held, step.text)
        assert added == step.adds
        if is_plain_delta(step.text, len(held), solid_len(held), solid_len(step.text)):
            assert added == step.text, "the fast path took a re-send for a genuine delta"
        held += added
    assert held == message


# Rule 3: short texts, whitespace-varied re-sends, containment ------------------------------

WORDS = st.text(alphabet="abcxyz0123|-*#é表😀", min_size=1, max_size=7)


@st.composite
def spaced_texts(draw: st.DrawFn, max_words: int = 12) -> str:
    """Words with any whitespace between and around them: short replies padded with blank
    lines as well as long ones (whitespace-normalised, anything from 1 to about 100
    characters)."""
    words = draw(st.lists(WORDS, min_size=1, max_size=max_words))
    return draw(whitespace_variants(" ".join(words)))


@given(spaced_texts(), st.data())
def test_a_whitespace_varied_resend_is_a_recap_exactly_when_it_reaches_the_floor(
    text: str, data: st.DataObject
) -> None:
    # Rule 3: equal normalised texts fold, never below 24 characters (of normalised text:
    # "ok" padded with 25 spaces is still "ok").
    resend = data.draw(whitespace_variants(text))
    folds = len(normalise_ws(text)) >= RECAP_FLOOR
    assert is_recap(text, resend) == folds
    assert is_recap(resend, text) == folds
    if folds:  # the row already holds the message: its text stays as it is
        assert fold_recap(text, resend) == NO_GROWTH


@given(st.lists(WORDS, min_size=2, max_size=24), st.data())
def test_a_contained_text_is_a_recap_exactly_when_it_covers_sixty_percent(
    words: list[str], data: st.DataObject
) -> None:
    # Rule 3: one contains the other, and the shorter covers at least 60% of the longer
    # (in either direction: the row may be the shorter text or the longer one).
    longer = " ".join(words)
    size = data.draw(
        st.one_of(
            st.integers(min_value=1, max_value=len(longer)),
            st.integers(min_value=-2, max_value=2).map(lambda d: (3 * len(longer) + 4) // 5 + d),
        ).filter(lambda n: 1 <= n <= len(longer))
    )
    start = data.draw(st.integers(min_value=0, max_value=len(longer) - size))
    shorter = longer[start : start + size].strip()
    assume(shorter)
    part = data.draw(whitespace_variants(shorter))
    whole = data.draw(whitespace_variants(longer))
    folds = len(shorter) >= RECAP_FLOOR and 5 * len(shorter) >= 3 * len(longer)
    assert is_recap(whole, part) == folds
    assert is_recap(part, whole) == folds


@given(spaced_texts(max_words=4), st.data())
def test_a_short_text_never_folds_as_a_recap(text: str, data: st.DataObject) -> None:
    other = data.draw(st.one_of(whitespace_variants(text), spaced_texts()))
    if min(len(normalise_ws(text)), len(normalise_ws(other))) < RECAP_FLOOR:
        assert not is_recap(text, other)
        assert not is_recap(other, text)


# Rule 4: a tool call's updates ------------------------------------------------------------

TOOL_FIELDS = {
    "title": st.one_of(st.none(), st.sampled_from(["Run", "Read the file", "Edit"])),
    "status": st.one_of(
        st.none(), st.sampled_from(["pending", "in_progress", "completed", "failed"])
    ),
    "content": st.lists(
        st.builds(
            lambda text: {"type": "content", "content": {"type": "text", "text": text}},
            st.text("abc", max_size=3),
        ),
        max_size=2,
    ),
    "_meta": st.one_of(
        st.none(), st.dictionaries(st.sampled_from(["a", "b", "c"]), st.integers(0, 3), max_size=3)
    ),
}


@st.composite
def tool_updates(draw: st.DrawFn, call_id: str, start: bool) -> list[dict[str, Any]]:
    """Wire updates of one tool call: its `tool_call` first when `start`, then updates (now
    and then a repeated start), each with a few fields, some of them null, and `_meta`
    objects whose keys overlap from one update to the next."""
    updates = []
    for number in range(draw(st.integers(min_value=1, max_value=5))):
        repeat = draw(st.integers(min_value=0, max_value=5)) == 0
        name = "tool_call" if (start and number == 0) or repeat else "tool_call_update"
        fields = draw(st.fixed_dictionaries({}, optional=TOOL_FIELDS))
        updates.append({"sessionUpdate": name, "toolCallId": call_id, **fields})
    return updates


def tool_payload(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """Rule 4, field by field, over every update of one tool call: a field holds the last
    non-null value sent (a list whole, never appended to), and `_meta` holds every key
    any update sent, with the value the latest of them sent."""
    fields = {name for update in updates for name in update} - {"sessionUpdate"}
    payload = {}
    for name in fields:
        sent = [update[name] for update in updates if update.get(name) is not None]
        if sent:
            payload[name] = sent[-1]
    metas = [update["_meta"] for update in updates if update.get("_meta") is not None]
    if metas:
        payload["_meta"] = {key: value for meta in metas for key, value in meta.items()}
    return payload


@given(st.booleans(), st.data())
def test_a_tool_row_holds_each_fields_latest_value(start: bool, data: st.DataObject) -> None:
    updates = data.draw(tool_updates("t", start))
    payload = None
    for update_fields in updates:
        payload = merge_tool(payload, update_fields)
    assert payload == tool_payload(updates)


# A whole session through the Store and the view ------------------------------------------


@dataclass
class Scripted:
    """A message, streamed as `steps`."""

    kind: str
    message: str
    steps: list[Step]


@dataclass
class Recap:
    """An earlier message re-sent whole in one id-less chunk, with its whitespace changed."""

    kind: str
    message: str
    text: str


@dataclass
class ToolCall:
    """Updates of one tool call, sent one after another."""

    call_id: str
    updates: list[dict[str, Any]]


Entry = Scripted | Recap | ToolCall


@st.composite
def sessions(draw: st.DrawFn) -> list[Entry]:
    """One turn: up to eight text entries (so each is within the recap lookback) of two
    kinds, each a new message or a recap of an earlier one, with a tool call between two
    of the same kind (else they would be one message by adjacency) and now and then
    between others. A tool call is a new one or more updates of an earlier one."""
    script: list[Entry] = []
    said: list[Scripted] = []
    calls: list[str] = []
    last_kind = None
    for number in range(draw(st.integers(min_value=1, max_value=8))):
        entry: Scripted | Recap
        if said and draw(st.integers(min_value=0, max_value=2)) == 0:
            repeated = draw(st.sampled_from(said))
            text = draw(whitespace_variants(repeated.message))
            entry = Recap(repeated.kind, repeated.message, text)
        else:
            message = draw(messages(first_index=100 * number))
            kind = draw(st.sampled_from(["agent", "thought"]))
            entry = Scripted(kind, message, draw(streams(message)))
            said.append(entry)
        if entry.kind == last_kind or draw(st.booleans()):
            if draw(st.booleans()) and calls:
                call_id = draw(st.sampled_from(calls))
                script.append(ToolCall(call_id, draw(tool_updates(call_id, start=False))))
            else:
                call_id = f"t{number}"
                calls.append(call_id)
                script.append(ToolCall(call_id, draw(tool_updates(call_id, draw(st.booleans())))))
        script.append(entry)
        last_kind = entry.kind
    return script


def expected_rows(script: list[Entry]) -> list[tuple[str, str, dict[str, Any] | None]]:
    """(kind, text, payload) of the rows the folding rules make of `script`, in order.

    Rule 1: a tool call's updates are one row, where its first update put it. Rule 3: a
    recap of a message whose normalised text has at least 24 characters folds into it and
    changes nothing; a shorter one is a message of its own.
    """
    rows: list[tuple[str, str, dict[str, Any] | None]] = []
    calls: dict[str, list[dict[str, Any]]] = {}
    for entry in script:
        if isinstance(entry, ToolCall):
            if entry.call_id not in calls:
                calls[entry.call_id] = []
                rows.append(("tool", entry.call_id, None))
            calls[entry.call_id] += entry.updates
        elif isinstance(entry, Scripted):
            rows.append((entry.kind, entry.message, None))
        elif len(normalise_ws(entry.message)) < RECAP_FLOOR:
            rows.append((entry.kind, entry.text, None))
    return [
        ("tool", "", tool_payload(calls[text])) if kind == "tool" else (kind, text, payload)
        for kind, text, payload in rows
    ]


def run(coroutine: object) -> None:
    asyncio.run(coroutine)  # type: ignore[arg-type]


async def feed_script(
    store: Store,
    session: str,
    script: list[Entry],
    between: Callable[[], Awaitable[list[Frame]]] | None = None,
) -> list[Frame]:
    """Apply a script's chunks in order; return the frames. `between` runs between any two
    chunks of one message (what else arrives meanwhile) and returns its own frames."""
    frames: list[Frame] = []
    for entry in script:
        if isinstance(entry, ToolCall):
            for fields in entry.updates:
                frames += await store.apply(update(session, **fields))
            continue
        make = reply if entry.kind == "agent" else thought
        steps = entry.steps if isinstance(entry, Scripted) else [Step(entry.text, "")]
        for index, step in enumerate(steps):
            if index and between is not None:
                frames += await between()
            frames += await store.apply(make(session, step.text))
    return frames


@settings(max_examples=60)
@given(sessions(), st.data())
def test_store_folds_each_message_into_one_row_and_the_live_view_equals_it(
    script: list[Entry], data: st.DataObject
) -> None:
    async def scenario(folder: str) -> None:
        path = Path(folder) / "c.db"
        async with await Store.open(path) as store:
            session = await new_session(store)
            view = ViewTranscript()
            frames = await feed_script(store, session, script)
            await store.end_turn(session)
            # Deliver every frame once or twice, and now and then re-read a row mid-stream.
            for frame in frames:
                for _ in range(data.draw(st.integers(min_value=1, max_value=2))):
                    view.apply(frame)
                if data.draw(st.integers(min_value=0, max_value=9)) == 0:
                    row = await store.row(session, frame.key)
                    assert row is not None
                    view.read([row])
            rows = await store.all_rows(session)
            assert [(r.kind, r.text, r.payload) for r in rows] == expected_rows(script)
            assert [(b.key, b.kind, b.text, b.payload) for b in view] == [
                (r.key, r.kind, r.text, r.payload) for r in rows
            ]
            assert not any(b.stale for b in view)
        async with await Store.open(path) as reopened:  # what was written is what was shown
            assert await reopened.all_rows(session) == rows

    with tempfile.TemporaryDirectory() as folder:
        run(scenario(folder))


@given(
    st.lists(st.integers(min_value=0, max_value=600_000), max_size=300),
    st.integers(min_value=1, max_value=150),
    st.integers(min_value=1, max_value=300_000),
)
def test_page_length_bounds(sizes: list[int], max_rows: int, max_bytes: int) -> None:
    count = page_length(sizes, max_rows, max_bytes)
    assert count <= max_rows
    if sizes:
        assert count >= 1
        assert count == 1 or sum(sizes[:count]) <= max_bytes
        # Maximal: the next row would break a bound.
        if count < len(sizes):
            assert count == max_rows or sum(sizes[: count + 1]) > max_bytes
    else:
        assert count == 0


@settings(max_examples=25)
@given(
    st.lists(st.integers(min_value=1, max_value=4000), min_size=1, max_size=60),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=9000),
    st.integers(min_value=0, max_value=3),
)
def test_pages_concatenate_to_all_rows(
    sizes: list[int], max_rows: int, max_bytes: int, unflushed: int
) -> None:
    async def scenario(folder: str) -> None:
        async with await Store.open(Path(folder) / "c.db") as store:
            session = await new_session(store)
            for number, size in enumerate(sizes):
                await store.apply(note(session, "notice", f"{number:05d}" + "n" * size))
            for number in range(unflushed):  # rows still in memory take part in pages
                await store.apply(thought(session, f"open thought {number} " * 3))
                await store.apply(
                    update(session, sessionUpdate="tool_call", toolCallId=f"x{number}", title="t")
                )
            everything = await store.all_rows(session)
            assert len(everything) == len(sizes) + 2 * unflushed
            backwards: list[list[int]] = []
            before = None
            while True:
                page = await store.page_before(session, before, max_rows, max_bytes)
                assert 1 <= len(page.rows) <= max_rows
                assert len(page.rows) == 1 or sum(r.bytes for r in page.rows) <= max_bytes
                backwards.append([r.seq for r in page.rows])
                if not page.has_more:
                    break
                before = page.rows[0].seq
            seqs = [seq for page_seqs in reversed(backwards) for seq in page_seqs]
            assert seqs == [r.seq for r in everything]
            forwards: list[int] = []
            after = 0
            while True:
                page = await store.rows_after(session, after, max_rows, max_bytes)
                forwards += [r.seq for r in page.rows]
                if not page.has_more:
                    break
                after = page.rows[-1].seq
            assert forwards == seqs

    with tempfile.TemporaryDirectory() as folder:
        run(scenario(folder))
