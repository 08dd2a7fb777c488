"""Property tests: any message, split anywhere, re-sent in any mix, folds to itself in one row.

Messages are built from segments that each start with a unique 4-digit index, so no
16-character run repeats: the one ambiguity rule 2 accepts by design (a GENUINE delta
that happens to repeat what the row already ends with) cannot occur, and every re-send
the strategy makes is one the rules are meant to recognise.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from store import Frame, Store, ViewTranscript, note
from store.fold import MIN_OVERLAP, new_text
from store.paging import page_length
from tests.helpers import new_session, reply, thought, update

FILLER = st.text(alphabet=" \n\t|-*#abcxyzé表😀", max_size=6)


@st.composite
def messages(draw: st.DrawFn, first_index: int = 0) -> str:
    count = draw(st.integers(min_value=2, max_value=40))
    return "".join(f"{first_index + i:04d}{draw(FILLER)}" for i in range(count))


@dataclass
class Step:
    """One chunk of a stream and the text it should add."""

    text: str
    adds: str


@st.composite
def streams(draw: st.DrawFn, message: str) -> list[Step]:
    """`message` as a stream: genuine pieces (the first at least 16 characters, the rest
    shorter, as token deltas are) mixed with exact re-sends, whitespace re-sends,
    snapshots and tail overlaps."""
    top = max(len(message), MIN_OVERLAP)
    cuts = sorted(draw(st.sets(st.integers(min_value=MIN_OVERLAP, max_value=top), max_size=30)))
    bounds = [0, *[c for c in cuts if c < len(message)], len(message)]
    pieces = [message[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    steps: list[Step] = []
    held = ""
    index = 0
    while index < len(pieces):
        piece = pieces[index]
        resend = (
            draw(st.sampled_from(["none", "none", "exact", "space", "snapshot", "tail"]))
            if held
            else "none"
        )
        if resend == "exact":
            steps.append(Step(held, ""))
        elif resend == "space":
            inner = [m for m in re.finditer(r"\s+", held) if m.end() < len(held)]
            if inner:
                run = draw(st.sampled_from(inner))
                steps.append(Step(held[: run.end()] + " " + held[run.end() :], ""))
        elif resend == "snapshot":
            steps.append(Step(held + piece, piece))
            held += piece
            index += 1
            continue
        elif resend == "tail" and len(held) >= MIN_OVERLAP:
            size = draw(st.integers(min_value=MIN_OVERLAP, max_value=len(held)))
            steps.append(Step(held[-size:] + piece, piece))
            held += piece
            index += 1
            continue
        steps.append(Step(piece, piece))
        held += piece
        index += 1
    return steps


@given(st.data())
def test_new_text_rebuilds_any_message(data: st.DataObject) -> None:
    message = data.draw(messages())
    held = ""
    for step in data.draw(streams(message)):
        added = new_text(held, step.text)
        assert added == step.adds
        held += added
    assert held == message


@dataclass
class Scripted:
    kind: str
    message: str
    steps: list[Step]


@st.composite
def sessions(draw: st.DrawFn) -> list[Scripted | None]:
    """Several messages of alternating kinds, some separated by tool calls (None)."""
    script: list[Scripted | None] = []
    kind = "agent"
    base = 0
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        message = draw(messages(first_index=base))
        base += 100
        script.append(Scripted(kind, message, draw(streams(message))))
        if draw(st.booleans()):
            script.append(None)
        else:
            kind = "thought" if kind == "agent" else "agent"
    return script


def run(coroutine: object) -> None:
    asyncio.run(coroutine)  # type: ignore[arg-type]


@settings(max_examples=60)
@given(sessions(), st.data())
def test_store_folds_each_message_into_one_row_and_the_live_view_equals_it(
    script: list[Scripted | None], data: st.DataObject
) -> None:
    async def scenario(folder: str) -> None:
        async with await Store.open(Path(folder) / "c.db") as store:
            session = await new_session(store)
            view = ViewTranscript()
            frames: list[Frame] = []
            expected: list[tuple[str, str]] = []
            for number, entry in enumerate(script):
                if entry is None:
                    chunk = update(
                        session, sessionUpdate="tool_call", toolCallId=f"t{number}", title="Run"
                    )
                    expected.append(("tool", ""))
                    frames += await store.apply(chunk)
                    continue
                expected.append((entry.kind, entry.message))
                make = reply if entry.kind == "agent" else thought
                for step in entry.steps:
                    frames += await store.apply(make(session, step.text))
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
            assert [(r.kind, r.text) for r in rows] == expected
            assert [(b.key, b.kind, b.text) for b in view] == [
                (r.key, r.kind, r.text) for r in rows
            ]
            assert not any(b.stale for b in view)

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
