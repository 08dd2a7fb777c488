"""The streaming reply on screen is never stale: a reply streamed in small chunks (lines
that grow and wrap, a table whose columns widen, a code block that opens and closes, a
list) shows, after each pause and at the end, exactly the lines of a reply rendered fresh
from the same text. The bubble repaints only the lines that changed, so this compares
what the screen would write (the compositor's lines), not the bubble's text."""

from __future__ import annotations

import asyncio
import html
import re
from pathlib import Path

import pytest

from cockpit.api import FramesEvent, StatusEvent
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.transcript import TranscriptView
from store import chunk_from_update, note
from store.workload import text_update
from tests.bench.tui_runs import fresh_lines, screen_lines
from tests.support.ui_helpers import add_session, fill, local, make_app, wait_until

SIZE = (80, 24)

REPLY = (
    "# Streaming check\n\n"
    "A paragraph that grows word by word until it wraps over several lines of the "
    "terminal, so the last line keeps changing while the lines above it stay as they "
    "are, and then one more sentence that pushes it onto yet another line.\n\n"
    "| name | count |\n"
    "|------|------:|\n"
    "| alpha | 1 |\n"
    "| beta | 22 |\n"
    "| a much wider name than any before it | 333 |\n"
    "| gamma | 4444 |\n\n"
    "```python\n"
    "def fold(held, incoming):\n"
    "    if incoming.startswith(held):\n"
    "        return incoming[len(held):]\n"
    "    return incoming\n"
    "```\n\n"
    "- a first item\n"
    "- a second item that is long enough to wrap onto a second line of the terminal "
    "when the bubble is this narrow\n\n"
    "A last line, then the end.\n"
)

CHECKPOINTS = (
    REPLY.index("word by word") + 5,  # inside the first paragraph
    REPLY.index("terminal, so"),  # the paragraph has wrapped
    REPLY.index("| alpha"),  # the table's header only
    REPLY.index("| a much wider") + 12,  # a row half written
    REPLY.index("| gamma"),  # the wide row widened every column
    REPLY.index("    if incoming"),  # inside the open code block
    REPLY.index("```\n\n- a first") + 4,  # the code block just closed
    REPLY.index("wrap onto"),  # inside the list
)


async def settle(pilot: object, app: CockpitApp, text: str) -> None:
    """Until the reply's bubble holds `text` (everything emitted so far) with no repaint
    waiting for its timer, then the screen's update: what it shows then is the last
    repaint's frame, which must be all of `text`."""

    def painted() -> bool:
        bubbles = list(app.query(AgentBubble))
        return bool(bubbles) and bubbles[-1].text == text and not bubbles[-1].repaint_pending

    await wait_until(painted, what="the reply's bubble holding the text sent, its repaint done")
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


def assert_screen_shows(app: CockpitApp, text: str) -> None:
    """The bubble's lines in view are those of a reply rendered fresh from `text`."""
    bubble = app.query_one(AgentBubble)
    first, shown = screen_lines(app, bubble)
    fresh = fresh_lines(bubble, text)
    assert shown, "the reply is not on screen"
    assert shown == fresh[first : first + len(shown)], (first, len(fresh))


async def app_with_a_session(tmp_path: Path) -> CockpitApp:
    """An app on a store holding one session with nothing in it yet."""

    async def build(engine: object) -> None:
        await add_session(engine, tmp_path / "project", "stream", [])  # type: ignore[arg-type]

    (tmp_path / "project").mkdir()
    await fill(tmp_path / "home", build)
    return make_app(tmp_path, tmp_path / "project")


@pytest.mark.parametrize("chunk", [3, 4, 7])
async def test_a_streamed_reply_on_screen_equals_a_fresh_rendering(
    tmp_path: Path, chunk: int
) -> None:
    app = await app_with_a_session(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        await pilot.pause()
        engine, session = local(app), app.current or ""
        _, opening = await engine.store.begin_turn(session, "stream a reply")
        engine._emit(FramesEvent(session, tuple(opening)))
        checkpoints = iter(CHECKPOINTS)
        stop = next(checkpoints)
        for number, index in enumerate(range(0, len(REPLY), chunk)):
            update = text_update("agent_message_chunk", REPLY[index : index + chunk])
            frames = await engine.store.apply(chunk_from_update(session, update))
            engine._emit(FramesEvent(session, tuple(frames)))
            if number % 5 == 0:
                await asyncio.sleep(0.004)  # some chunks arrive one by one, some in bursts
            if index + chunk >= stop:
                await settle(pilot, app, REPLY[: index + chunk])
                assert_screen_shows(app, REPLY[: index + chunk])
                stop = next(checkpoints, len(REPLY) + 1)
        await settle(pilot, app, REPLY)
        assert_screen_shows(app, REPLY)  # the turn has not ended: still the live bubble
        assert app.query_one(AgentBubble).live
        await engine.store.end_turn(session)
        engine._emit(StatusEvent(session, "ready"))
        await settle(pilot, app, REPLY)
        assert [w.text for w in app.query(AgentBubble)] == [REPLY]
        assert_screen_shows(app, REPLY)
        view = app.query_one(TranscriptView)
        for y in range(int(view.max_scroll_y), -1, -5):  # every line, scrolled back into view
            view.scroll_to(y=y, animate=False, immediate=True)
            await pilot.pause()
            assert_screen_shows(app, REPLY)


async def test_a_notice_in_the_middle_of_a_reply_leaves_it_streaming_live(tmp_path: Path) -> None:
    """A notice (a malformed update ignored, a decision) is Cockpit's own row: the reply it
    interrupts stays one row and one live bubble above it, and goes on streaming."""

    app = await app_with_a_session(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        engine, session = local(app), app.current or ""
        _, opening = await engine.store.begin_turn(session, "stream a reply")
        engine._emit(FramesEvent(session, tuple(opening)))
        half = len(REPLY) // 2
        for part, notice in ((REPLY[:half], True), (REPLY[half:], False)):
            for index in range(0, len(part), 4):
                update = text_update("agent_message_chunk", part[index : index + 4])
                frames = await engine.store.apply(chunk_from_update(session, update))
                engine._emit(FramesEvent(session, tuple(frames)))
            if notice:
                frames = await engine.store.apply(note(session, "notice", "Ignored a bad line."))
                engine._emit(FramesEvent(session, tuple(frames)))
                await settle(pilot, app, part)
        await settle(pilot, app, REPLY)
        (reply,) = app.query(AgentBubble)
        assert reply.live, "the notice finished the reply it interrupted"
        assert_screen_shows(app, REPLY)
        rows = await engine.rows(session)
        assert [(r.kind, r.text) for r in rows] == [
            ("user", "stream a reply"),
            ("agent", REPLY),
            ("notice", "Ignored a bad line."),
        ]


async def test_an_escape_sequence_cut_between_chunks_never_shows_on_screen(tmp_path: Path) -> None:
    """Each chunk was cleaned alone: an OSC cut between two showed its title as text."""

    app = await app_with_a_session(tmp_path)
    text = "A title change \x1b]0;pwned\x07 and \x1b[31mred\x1b[0m text.\n"
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        engine, session = local(app), app.current or ""
        _, opening = await engine.store.begin_turn(session, "escape")
        engine._emit(FramesEvent(session, tuple(opening)))
        for index in range(0, len(text), 2):  # one frame at a time, each shown
            update = text_update("agent_message_chunk", text[index : index + 2])
            frames = await engine.store.apply(chunk_from_update(session, update))
            engine._emit(FramesEvent(session, tuple(frames)))
            await settle(pilot, app, text[: index + 2])
            screen = shown_text(app)
            assert "pwn" not in screen and "31m" not in screen and "0;" not in screen
        assert "A title change  and red text." in shown_text(app)


def shown_text(app: CockpitApp) -> str:
    """The characters on screen, as a user reads them."""
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r">([^<]*)</text>", svg))).replace("\xa0", " ")
