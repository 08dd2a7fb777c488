"""The view-side transcript: length-guarded live frames, reads that replace, pages merged by key."""

from __future__ import annotations

from store import Frame, Row, ViewTranscript


def frame(part: str, n: int, key: str = "agent:1:@2", seq: int = 2, delta: bool = True) -> Frame:
    return Frame("s", key, seq, "agent", 1, part, delta, n)


def row(text: str, key: str = "agent:1:@2", seq: int = 2) -> Row:
    return Row("s", seq, key, "agent", "agent", 1, text, None, len(text), 0.0, 0.0)


def test_live_frames_append() -> None:
    view = ViewTranscript()
    view.apply(frame("Hel", 3))
    view.apply(frame("lo", 5))
    assert view.texts() == ["Hello"]


def test_a_frame_whose_head_the_view_already_holds_appends_only_the_rest() -> None:
    view = ViewTranscript()
    view.apply(frame("Hello wo", 8))
    bubble = view.apply(frame("world", 11))  # "wo" is already on screen
    assert bubble is not None
    assert bubble.text == "Hello world"


def test_a_duplicate_frame_after_a_read_is_skipped() -> None:
    view = ViewTranscript()
    view.apply(frame("Hel", 3))
    view.read([row("Hello")])
    assert view.apply(frame("lo", 5)) is None  # arrived late: the read already had it
    view.apply(frame("!", 6))
    assert view.texts() == ["Hello!"]


def test_a_guard_by_seq_would_drop_every_chunk_after_the_first() -> None:
    # All frames of a folded row share one seq; the length guard still takes each.
    view = ViewTranscript()
    for n, part in enumerate("streaming", start=1):
        view.apply(frame(part, n))
    assert view.texts() == ["streaming"]


def test_a_gap_marks_the_bubble_stale_and_a_read_heals_it() -> None:
    view = ViewTranscript()
    bubble = view.apply(frame("world", 11))  # the view subscribed mid-message
    assert bubble is not None
    assert bubble.stale
    assert bubble.text == ""
    view.read([row("Hello world")])
    assert not bubble.stale
    assert bubble.text == "Hello world"


def test_an_earlier_page_merges_by_key_and_the_longer_text_wins() -> None:
    view = ViewTranscript()
    view.apply(frame("streaming still", 15, key="agent:1:@5", seq=5))
    view.merge_page(
        [
            row("older", key="user:1:@1", seq=1),
            row("stream", key="agent:1:@5", seq=5),  # straddles the page edge: shorter, kept as is
        ]
    )
    assert [(b.seq, b.text) for b in view] == [(1, "older"), (5, "streaming still")]
    view.merge_page([row("streaming still, and done", key="agent:1:@5", seq=5)])
    assert view.texts() == ["older", "streaming still, and done"]


def test_bubbles_stay_in_seq_order_and_can_be_dropped() -> None:
    view = ViewTranscript()
    for seq in (7, 3, 5):
        view.apply(frame(f"m{seq}", 2, key=f"k{seq}", seq=seq, delta=False))
    assert view.texts() == ["m3", "m5", "m7"]
    view.drop(["k5", "missing"])
    assert view.texts() == ["m3", "m7"]
    assert "k5" not in view
    assert len(view) == 2


def test_a_replacement_frame_replaces_the_text_and_payload() -> None:
    view = ViewTranscript()
    view.apply(Frame("s", "tool:t", 4, "tool", 1, "", False, 0, {"status": "pending"}))
    view.apply(Frame("s", "tool:t", 4, "tool", 1, "", False, 0, {"status": "completed"}))
    bubble = view.get("tool:t")
    assert bubble is not None
    assert bubble.payload == {"status": "completed"}
