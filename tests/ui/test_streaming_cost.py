"""A streamed piece costs what it carries, not what the reply holds: no step of the live
path (the view fold, the widget that shows the reply, its Markdown block splitter, the
command line's printer) copies the whole reply for each piece, which is what made a long
reply cost the square of its length. Checked without a clock: the most memory one more
piece allocates at once (`tracemalloc`), against the size of the reply already held (a
copy of it would be at least that large); in the app, where the screen's own work on a
tall widget blurs that measure, the characters read back through the bubbles' `text`
(each read is a join of the whole reply): none."""

from __future__ import annotations

import asyncio
import io
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from rich.segment import Segment
from textual.strip import Strip

from cockpit.cli.run import StreamPrinter
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.mdblocks import BlockSplitter
from cockpit.ui.repaint import PAINT_SHARE, SLOWEST_REPAINT, ReplyLines
from cockpit.ui.transcript import TranscriptView
from store import Bubble, Frame, ViewTranscript, chunk_from_update
from store.pieces import Pieces
from store.workload import text_update
from tests.support.ui_helpers import add_session, fill, local, make_app, wait_until

HELD = 200_000
"""The characters held before the pieces that are measured."""

BOUND = HELD // 4
"""The most a few more pieces may allocate at once: far below one copy of what is held."""


class Peak:
    """The most memory one step allocated at once beyond what was held when it began, in
    bytes, over all the steps measured."""

    def __init__(self) -> None:
        self.most = 0

    def __enter__(self) -> Peak:
        tracemalloc.start()
        return self

    def __exit__(self, *exc: object) -> None:
        tracemalloc.stop()

    @contextmanager
    def step(self) -> Iterator[None]:
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        yield
        self.most = max(self.most, tracemalloc.get_traced_memory()[1] - held)


def paragraphs(size: int) -> str:
    """`size` characters of short Markdown paragraphs (many small blocks)."""
    block = "A short paragraph of the reply.\n\n"
    return (block * (size // len(block) + 1))[:size]


def frames_for(text: str, start: int, key: str = "agent:1:@2") -> list[Frame]:
    """Delta frames carrying `text` from `start` on, in 4-character pieces."""
    return [
        Frame("s", key, 2, "agent", 1, text[i : i + 4], True, min(i + 4, len(text)))
        for i in range(start, len(text), 4)
    ]


@pytest.mark.parametrize(
    "held",
    [
        "```python\n" + "x = compute(a, b)\n" * (HELD // 18),  # a huge open code block
        "word " * (HELD // 5),  # one paragraph, not even a line break
    ],
    ids=["code block", "paragraph"],
)
def test_the_block_splitter_does_not_copy_a_long_open_block_per_piece(held: str) -> None:
    splitter = BlockSplitter()
    for index in range(0, len(held), 4096):
        splitter.feed(held[index : index + 4096])
    with Peak() as peak:
        for _ in range(50):
            with peak.step():
                splitter.feed("more")
    assert peak.most < BOUND
    assert splitter.tail == held + "more" * 50


def test_the_view_fold_does_not_copy_what_a_bubble_holds_per_frame() -> None:
    text = paragraphs(HELD + 200)
    view = ViewTranscript()
    view.fold(Frame("s", "agent:1:@2", 2, "agent", 1, text[:HELD], True, HELD))
    with Peak() as peak:
        for frame in frames_for(text, HELD):
            with peak.step():
                view.fold(frame)
    assert peak.most < BOUND
    assert view.texts() == [text]


def test_the_command_line_printer_does_not_read_the_whole_reply_per_frame() -> None:
    text = paragraphs(HELD + 200)
    out = io.StringIO()
    printer = StreamPrinter(out, "s", sanitize=False)
    printer.frame(Frame("s", "agent:1:@2", 2, "agent", 1, text[:HELD], True, HELD))
    out.seek(0)
    out.truncate()  # the printed text is the terminal's, not the printer's
    with Peak() as peak:
        for frame in frames_for(text, HELD):
            with peak.step():
                printer.frame(frame)
    assert peak.most < BOUND
    assert out.getvalue() == text[HELD:]


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the characters read through the `text` of view bubbles and reply widgets
    (each read joins the pieces held): the list holds the running total."""
    total = [0]
    for cls in (Bubble, AgentBubble):
        original: property = cls.__dict__["text"]
        assert original.fget is not None

        def read(self: object, get: Callable[[object], str] = original.fget) -> str:
            text = get(self)
            total[0] += len(text)
            return text

        monkeypatch.setattr(cls, "text", property(read, original.fset))
    return total


@asynccontextmanager
async def live_reply(tmp_path: Path, head: str) -> AsyncIterator[tuple[Any, AgentBubble]]:
    """The app showing a turn whose reply streams live and already holds `head`:
    (a function that streams more text into it through the transcript, one frame per
    4-character piece, and the reply's widget)."""

    async def build(engine: object) -> None:
        await add_session(engine, tmp_path / "project", "long", [])  # type: ignore[arg-type]

    (tmp_path / "project").mkdir()
    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, tmp_path / "project")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(lambda: app.current is not None)
        await pilot.pause()
        engine, session = local(app), app.current or ""
        view = app.query_one(TranscriptView)
        _, opening = await engine.store.begin_turn(session, "a long reply")
        await view.apply_frames(opening)
        chunk = chunk_from_update(session, text_update("agent_message_chunk", head))
        await view.apply_frames(await engine.store.apply(chunk))
        await pilot.pause()
        widget = app.query_one(AgentBubble)
        assert widget.live

        async def stream(more: str) -> None:
            frames: list[Frame] = []
            for index in range(0, len(more), 4):
                piece = text_update("agent_message_chunk", more[index : index + 4])
                frames += await engine.store.apply(chunk_from_update(session, piece))
            for frame in frames:
                await view.apply_frames([frame])
                await asyncio.sleep(0)  # the screen updates now and then
            await pilot.pause()

        yield stream, widget
        assert [b.text for b in view.model if b.kind == "agent"] == [widget.text]


async def test_the_transcript_appends_to_a_live_reply_without_reading_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held, more = paragraphs(HELD), paragraphs(400)
    async with live_reply(tmp_path, held) as (stream, widget):
        reads = counting_reads(monkeypatch)
        await stream(more)
        assert reads == [0]
        monkeypatch.undo()
        assert widget.text == held + more


async def test_an_expensive_rendering_waits_in_proportion_to_its_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply whose open block takes long to render (here: each rendering is made to
    count one CPU second) repaints at most once in the time that rendering earned it
    (4 s at a PAINT_SHARE of 0.25), not every SLOWEST_REPAINT: rendering it never takes
    more than its share of the loop, and a long block's cost stays linear."""
    slow = 1.0
    assert slow / PAINT_SHARE > 4 * SLOWEST_REPAINT
    async with live_reply(tmp_path, "```python\n" + "x = 1\n" * 50) as (stream, _):
        extra = [0.0]
        lines, cpu = AgentBubble._lines, time.thread_time

        def costly(self: AgentBubble, width: int) -> Any:
            extra[0] += slow
            return lines(self, width)

        paints: list[float] = []
        paint = AgentBubble._paint

        def counted(self: AgentBubble, late: float = 0.0) -> None:
            paints.append(time.monotonic())
            paint(self, late)

        monkeypatch.setattr(AgentBubble, "_lines", costly)
        monkeypatch.setattr(AgentBubble, "_paint", counted)
        monkeypatch.setattr(time, "thread_time", lambda: cpu() + extra[0])
        started = time.monotonic()
        while time.monotonic() - started < 4 * SLOWEST_REPAINT:
            await stream("y = 2\n")
        monkeypatch.undo()
        assert len(paints) == 1, paints


def test_a_long_streamed_text_is_held_in_about_its_own_size() -> None:
    """Not as one object per piece (about 60 bytes for 4 characters)."""
    with Peak():
        pieces = Pieces()
        for _ in range(HELD // 4):
            pieces.append("word")
        held = tracemalloc.get_traced_memory()[0]
    assert held < 2 * HELD
    assert pieces.text == "word" * (HELD // 4)


def test_a_repaint_frame_keeps_its_lines_while_the_reply_grows() -> None:
    """The frame on screen shares the sealed lines with the reply instead of copying
    them; it still shows what it showed when it was made."""
    sealed = [Strip([Segment(f"line {n}")]) for n in range(3)]
    tail = [Strip([Segment("open")])]
    frame = ReplyLines(sealed, tail)
    sealed += [Strip.blank(0), Strip([Segment("sealed later")])]
    assert len(frame) == 5
    assert [line.text for line in frame] == ["line 0", "line 1", "line 2", "", "open"]
    assert [frame[y].text for y in range(len(frame))] == [line.text for line in frame]
    assert [frame[y].text for y in (-1, -2, -5)] == ["open", "", "line 0"]
    with pytest.raises(IndexError):
        frame[5]
    assert [line.text for line in ReplyLines([], tail)] == ["open"]
    assert [line.text for line in ReplyLines(sealed[:1], [])] == ["line 0"]
