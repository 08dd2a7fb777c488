"""Joining the live frames the service sends together (`store.view.coalesce`): a view folds
the joined frames to exactly what it folds the frames one by one to, whatever it held
before, whatever gaps, repeats and reads the stream has."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from store import Frame, Row, ViewTranscript
from store.view import coalesce

KEYS = ("agent:1:@2", "thought:1:@3")


def frame(part: str, n: int, key: str = KEYS[0], delta: bool = True) -> Frame:
    return Frame("s", key, 2 if key == KEYS[0] else 3, "agent", 1, part, delta, n)


def row(text: str, key: str) -> Row:
    seq = 2 if key == KEYS[0] else 3
    return Row("s", seq, key, "agent", "agent", 1, text, None, len(text), 0.0, 0.0)


def test_a_run_of_continuing_frames_becomes_one_with_their_text() -> None:
    joined = coalesce([frame("Hel", 3), frame("lo", 5), frame(" you", 9)])
    assert joined == [frame("Hello you", 9)]


def test_frames_that_do_not_continue_one_another_stay_apart_in_order() -> None:
    frames = [
        frame("Hel", 3),
        frame("lo", 7),  # a gap: two characters missing
        frame("x", 1, key=KEYS[1]),  # another row
        frame("Hello", 5, delta=False),  # a read
        frame("!", 6),
    ]
    assert coalesce(frames) == frames


def test_a_frame_with_a_payload_is_never_joined() -> None:
    with_payload = frame("lo", 5)._replace(payload={"status": "done"})
    frames = [frame("Hel", 3), with_payload, frame("!", 6)]
    assert coalesce(frames) == frames


def test_nothing_in_nothing_out() -> None:
    assert coalesce([]) == []


@st.composite
def streams(draw: st.DrawFn) -> tuple[dict[str, str], dict[str, int], list[Frame]]:
    """Two rows' texts, what a view held of each before (a prefix read from a page, or
    nothing), and frames of them as a wire may carry them: live slices ending anywhere,
    repeated, overlapping or leaving gaps, and reads of a prefix, interleaved."""
    texts = {key: draw(st.text("abc ", max_size=24)) for key in KEYS}
    held = {key: draw(st.integers(-1, len(texts[key]))) for key in KEYS}
    frames: list[Frame] = []
    ends = dict.fromkeys(KEYS, 0)
    for _ in range(draw(st.integers(0, 30))):
        key = draw(st.sampled_from(KEYS))
        text = texts[key]
        if draw(st.integers(0, 9)) == 0:
            end = draw(st.integers(0, len(text)))
            frames.append(frame(text[:end], end, key, delta=False))
            continue
        # Usually the next slice; else a slice from anywhere.
        start = ends[key] if draw(st.booleans()) else draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        start = draw(st.integers(max(0, start - 2), start))  # a head the view may hold
        frames.append(frame(text[start:end], end, key))
        ends[key] = end
    return texts, held, frames


def folded(texts: dict[str, str], held: dict[str, int], frames: list[Frame]) -> list[object]:
    view = ViewTranscript()
    view.merge_page(row(texts[key][:end], key) for key, end in held.items() if end >= 0)
    for each in frames:
        view.fold(each)
    return [(bubble.key, bubble.text, bubble.stale, bubble.payload) for bubble in view]


@given(streams())
def test_a_view_folds_the_joined_frames_to_what_it_folds_the_frames_to(
    stream: tuple[dict[str, str], dict[str, int], list[Frame]],
) -> None:
    texts, held, frames = stream
    joined = coalesce(frames)
    assert len(joined) <= len(frames)
    assert [f for f in joined if not f.delta] == [f for f in frames if not f.delta]
    assert folded(texts, held, joined) == folded(texts, held, frames)
