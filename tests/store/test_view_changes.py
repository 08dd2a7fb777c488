"""What the view fold reports it changed: a view that shows exactly that, without ever
reading the whole text back, ends with the text the fold holds and with the rows the store
persisted, character for character, whatever frames it gets (duplicates, overlaps, gaps,
reads that extend or contradict what it holds)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from store import Frame, ViewTranscript
from store.pieces import RUN, Pieces
from store.store import Store
from tests.store.test_fold_properties import Entry, feed_script, sessions
from tests.support.helpers import new_session

KEYS = ("agent:1:@2", "thought:1:@3")


@st.composite
def frame_streams(draw: st.DrawFn) -> list[Frame]:
    """Frames for two rows, each cut from a true text of its own: deltas that carry the
    next piece, or more (a head the view already holds), or less than is missing (a gap),
    or nothing new (a duplicate); reads of a prefix of the truth, and now and then a read
    that says something else entirely."""
    truths = {key: draw(st.text(alphabet="ab \n", max_size=60)) for key in KEYS}
    frames: list[Frame] = []
    for _ in range(draw(st.integers(min_value=0, max_value=40))):
        key = draw(st.sampled_from(KEYS))
        truth = truths[key]
        seq, kind = KEYS.index(key) + 2, key.split(":")[0]
        what = draw(st.sampled_from(["delta", "delta", "delta", "read", "other"]))
        if what == "delta":
            n = draw(st.integers(min_value=0, max_value=len(truth)))
            start = draw(st.integers(min_value=0, max_value=n))
            frames.append(Frame("s", key, seq, kind, 1, truth[start:n], True, n))
        elif what == "read":
            k = draw(st.integers(min_value=0, max_value=len(truth)))
            frames.append(Frame("s", key, seq, kind, 1, truth[:k], False, k))
        else:
            other = draw(st.text(alphabet="xy", max_size=10))
            frames.append(Frame("s", key, seq, kind, 1, other, False, len(other)))
    return frames


def shown_from_changes(view: ViewTranscript, frames: list[Frame]) -> dict[str, str]:
    """What a view that only ever appends what the fold reports (and shows the whole text
    only when the fold says it was replaced) ends up showing."""
    shown: dict[str, str] = {}
    for frame in frames:
        change = view.fold(frame)
        if change is None:
            continue
        bubble, appended = change
        if appended is None:
            shown[bubble.key] = bubble.text
        else:
            shown[bubble.key] = shown.get(bubble.key, "") + appended
    return shown


@given(frame_streams())
def test_the_text_a_view_ends_with_is_what_the_fold_reported_appended(
    frames: list[Frame],
) -> None:
    view = ViewTranscript()
    shown = shown_from_changes(view, frames)
    assert shown == {b.key: b.text for b in view if b.key in shown}
    assert all(b.text == "" for b in view if b.key not in shown)


@given(frame_streams())
def test_each_change_is_the_difference_between_the_texts_before_and_after(
    frames: list[Frame],
) -> None:
    view = ViewTranscript()
    for frame in frames:
        held = view.get(frame.key)
        before = held.text if held is not None else ""
        change = view.fold(frame)
        bubble = view.get(frame.key)
        assert bubble is not None
        after = bubble.text
        assert bubble.length == len(after)
        if change is None:
            assert after == before  # a duplicate changes nothing
            continue
        assert change[0] is bubble
        appended = change[1]
        if appended is None:
            assert not frame.delta  # only a read may say something else
            assert not after.startswith(before)
        else:
            assert after == before + appended
        if frame.delta and not bubble.stale:
            assert len(after) == frame.n  # the length guard: the view holds `n` characters


def test_a_gap_appends_nothing_and_the_read_that_heals_it_reports_the_rest() -> None:
    view = ViewTranscript()
    assert view.fold(Frame("s", "k", 2, "agent", 1, "Hel", True, 3)) is not None
    change = view.fold(Frame("s", "k", 2, "agent", 1, "ld", True, 11))  # a gap: stale
    assert change is not None and change[0].stale and change[1] == ""
    healed = view.fold(Frame("s", "k", 2, "agent", 1, "Hello world", False, 11))
    assert healed is not None and healed[1] == "lo world" and not healed[0].stale
    replaced = view.fold(Frame("s", "k", 2, "agent", 1, "Bye", False, 3))
    assert replaced is not None and replaced[1] is None and replaced[0].text == "Bye"


@settings(max_examples=40)
@given(sessions(), st.data())
def test_a_view_built_from_the_reported_changes_equals_the_stored_rows(
    script: list[Entry], data: st.DataObject
) -> None:
    async def scenario(folder: str) -> None:
        async with await Store.open(Path(folder) / "c.db") as store:
            session = await new_session(store)
            frames = await feed_script(store, session, script)
            await store.end_turn(session)
            delivered: list[Frame] = []  # every frame once or twice, a row re-read now and then
            for frame in frames:
                delivered += [frame] * data.draw(st.integers(min_value=1, max_value=2))
                if data.draw(st.integers(min_value=0, max_value=9)) == 0:
                    row = await store.row(session, frame.key)
                    assert row is not None
                    delivered.append(Frame.read(row))
            shown = shown_from_changes(ViewTranscript(), delivered)
            rows = await store.all_rows(session)
            assert shown == {r.key: r.text for r in rows}

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(scenario(folder))


@given(st.lists(st.one_of(st.text(max_size=6), st.just(None)), max_size=3 * RUN))
def test_pieces_hold_exactly_what_was_appended(steps: list[str | None]) -> None:
    """`None` reads the text in between (which joins what is held)."""
    pieces, expected = Pieces("start"), "start"
    for step in steps:
        if step is None:
            assert pieces.text == expected
        else:
            pieces.append(step)
            expected += step
        assert len(pieces) == len(expected)
    assert pieces.text == expected
