"""A page merged into what the view shows: it never takes back what live frames showed,
and it heals a bubble that live frames left incomplete."""

from __future__ import annotations

from store import Frame, Row, ViewTranscript

KEY = "tool:t"


def tool_frame(status: str) -> Frame:
    return Frame("s", KEY, 4, "tool", 1, "", False, 0, {"toolCallId": "t", "status": status})


def tool_row(status: str) -> Row:
    payload = {"toolCallId": "t", "status": status}
    return Row("s", 4, KEY, "tool", "agent", 1, "", payload, 40, 0.0, 0.0)


def test_a_page_read_before_the_latest_frame_keeps_what_the_frame_showed() -> None:
    view = ViewTranscript()
    view.apply(tool_frame("pending"))
    view.apply(tool_frame("completed"))
    view.merge_page([tool_row("pending")])  # read from the store before the update came
    bubble = view.get(KEY)
    assert bubble is not None
    assert bubble.payload == {"toolCallId": "t", "status": "completed"}


def test_a_longer_page_heals_a_stale_bubble() -> None:
    view = ViewTranscript()
    bubble = view.apply(Frame("s", "agent:1:@5", 5, "agent", 1, "world", True, 11))
    assert bubble is not None
    assert bubble.stale  # the view never saw the head of this message
    text = "Hello world"
    view.merge_page([Row("s", 5, "agent:1:@5", "agent", "agent", 1, text, None, 11, 0.0, 0.0)])
    assert bubble.text == text
    assert not bubble.stale
