"""Sending a prompt follows the output, as every chat does: read far up with PageUp, then
type and press Enter in the same burst, and the prompt, the reply streaming under it and
the question it raises scroll into view, the transcript following them again. Through the
service and with the engine in process."""

from __future__ import annotations

from functools import partial

from textual.widget import Widget

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.transcript import TranscriptView
from tests.support.ui_helpers import burst, focused_composer, settled, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (80, 24)


def in_view(view: TranscriptView, widget: Widget) -> bool:
    """True when `widget`'s last line is on screen in the transcript."""
    region = widget.virtual_region
    top = round(view.scroll_y)
    return (
        bool(region.height)
        and top <= region.bottom - 1 < top + view.scrollable_content_region.height
    )


def prompt_bubble(view: TranscriptView, text: str) -> BubbleWidget | None:
    """The bubble of the prompt `text`, once it is mounted."""
    keys = [b.key for b in view.model if b.kind == "user" and b.text == text]
    return view.widgets.get(keys[-1]) if keys else None


def where(view: TranscriptView, widget: Widget) -> str:
    """Where `widget` and the view are, for a failure's message."""
    return (
        f"at {widget.virtual_region}, view at {view.scroll_y}/{view.max_scroll_y}, "
        f"following {view.following}, detached {view.detached}"
    )


def prompts_shown(view: TranscriptView) -> int:
    """How many prompts the transcript shows."""
    return sum(bubble.kind == "user" for bubble in view.model)


def started(view: TranscriptView, turn: int) -> bool:
    """True once the transcript shows prompt number `turn`."""
    return prompts_shown(view) >= turn


async def long_transcript(app: CockpitApp, session: str, pilot: object) -> TranscriptView:
    """Two `table` turns: many screens of transcript."""
    view = app.query_one(TranscriptView)
    for turn in (1, 2):
        burst(app, *"table", "enter")
        await wait_until(partial(started, view, turn), what="the turn to start")
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30, "its end")
    await settled(pilot)
    assert view.max_scroll_y > 3 * view.scrollable_content_region.height
    return view


async def test_a_prompt_sent_from_far_up_scrolls_into_view(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        view = await long_transcript(app, session, pilot)
        # PageUp, the prompt and Enter in one burst: no pause between them
        burst(app, "pageup", "pageup", "pageup", *"think permission", "enter")
        await wait_until(lambda: prompt_bubble(view, "think permission"), what="the prompt")
        await wait_until(lambda: app.query(PermissionPrompt), 30, "the question")
        await settled(pilot)
        question = app.query_one(PermissionPrompt)
        await wait_until(
            lambda: in_view(view, question),
            what=f"the question in view ({where(view, question)})",
        )
        assert not app.query_one("#new-output").display


async def test_a_reply_streaming_after_the_prompt_is_followed(engines: Engines) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session, _ = await focused_composer(app)
        view = await long_transcript(app, session, pilot)
        burst(app, "pageup", "pageup", *"slow", "enter")
        await wait_until(lambda: prompt_bubble(view, "slow"), what="the prompt")
        await wait_until(lambda: view.model and list(view.model)[-1].kind == "agent", 20)
        # while it streams, every look finds the newest line in view
        looks = 0
        while app.engine.status(session) != Status.READY and looks < 40:
            await pilot.pause(0.1)
            await wait_until(lambda: view.at_bottom, 5, "the view at the newest output")
            looks += 1
        assert looks > 3, "the reply ended before it was watched"
        assert not app.query_one("#new-output").display
