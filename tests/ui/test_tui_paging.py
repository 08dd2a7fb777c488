"""Paging the transcript with the keys and the mouse a user has, not by calling the loaders:
from the newest row to the first and back, the content moves one step at a time (never
stuck at a page edge, never a jump by a page), the window stays bounded, and the live turn
stays pinned while the user reads history. Also the keyboard: Tab reaches the transcript
in one press, Up/Down move between bubbles, the page keys work from a one-line prompt."""

from __future__ import annotations

import gc
import re
from pathlib import Path

from textual import events
from textual.pilot import Pilot
from textual.widget import Widget

from cockpit.api import FramesEvent
from cockpit.compat.textual_private import is_styles_cache, styles_cache_of
from cockpit.engine.core import Engine
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble, BubbleWidget
from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from cockpit.ui.transcript import BUBBLE_LIMIT, TranscriptView
from store import chunk_from_update
from store.workload import text_update
from tests.support.ui_helpers import add_rows, add_session, fill, local, make_app, wait_until

SMALL = (80, 24)
ROW = re.compile(r"row (\d{5})")


async def long_session(tmp_path: Path, rows: int, turns: int = 0) -> CockpitApp:
    """An app on a stored session: `turns` short turns, then `rows` one-line notices."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)

    async def build(engine: Engine) -> None:
        talk = [(f"question {n}", f"answer {n} " + "word " * 30) for n in range(turns)]
        session = await add_session(engine, project, "long", talk)
        await add_rows(engine, session, rows, size=20)

    await fill(tmp_path / "home", build)
    return make_app(tmp_path, project)


def view_of(app: CockpitApp) -> TranscriptView:
    return app.query_one(TranscriptView)


def focus_of(app: CockpitApp) -> Widget | None:
    return app.focused


async def settle(pilot: Pilot[None]) -> None:
    """Until no page is loading and the screen has caught up."""
    view = view_of(pilot.app)  # type: ignore[arg-type]
    await pilot.pause()
    for _ in range(100):
        if not view._loading:
            return
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    raise AssertionError("the transcript kept loading")


def on_screen(app: CockpitApp) -> list[tuple[int, int, int]]:
    """The `row NNNNN` bubbles on screen, top to bottom: (number, lines of it above the
    view, lines of it in view)."""
    view = view_of(app)
    window = view.scrollable_content_region
    shown = []
    for widget in view.widgets.values():
        region = widget.region
        if region.height and region.bottom > window.y and region.y < window.bottom:
            match = ROW.match(widget.text)
            if match:
                above = max(window.y - region.y, 0)
                inside = min(region.bottom, window.bottom) - max(region.y, window.y)
                shown.append((int(match.group(1)), above, inside))
    return shown


def visible_rows(app: CockpitApp) -> list[int]:
    """The numbers of the `row NNNNN` bubbles on screen, top to bottom."""
    return [number for number, _, _ in on_screen(app)]


async def wheel(pilot: Pilot[None], down: bool) -> None:
    """One notch of the mouse wheel over the transcript."""
    region = view_of(pilot.app).region  # type: ignore[arg-type]
    x, y = region.x + 10, region.y + 5
    event = events.MouseScrollDown if down else events.MouseScrollUp
    pilot.app.post_message(
        event(None, x, y, 0, 1 if down else -1, 0, False, False, False, screen_x=x, screen_y=y)
    )
    await settle(pilot)


async def travel(pilot: Pilot[None], step: object, up: bool, last: int, most_steps: int) -> int:
    """Scroll with `step` (a key, or a wheel notch) until row 0 (going up) or row `last`
    (going down) is on screen, at the very end. Every step moves the content the way it
    was asked to, never leaves a row out (what shows overlaps or touches what showed: no
    jump by a page) and the window stays bounded. Returns the steps taken."""
    app: CockpitApp = pilot.app  # type: ignore[assignment]
    view = view_of(app)
    shown = on_screen(app)
    for steps in range(1, most_steps + 1):
        if isinstance(step, str):
            await pilot.press(step)
            await settle(pilot)
        else:
            await wheel(pilot, down=not up)
        now = on_screen(app)
        assert now, f"no row on screen after {steps} steps"
        (top, above, _), (bottom, _, inside) = now[0], now[-1]
        (was_top, was_above, _), (was_bottom, _, was_inside) = shown[0], shown[-1]
        # Once the first (last) row shows whole, only the view's padding is left to scroll.
        if up and (was_top, was_above) != (0, 0):
            assert (top, above) < (was_top, was_above), f"stuck or back: {shown} -> {now}"
            assert bottom >= was_top - 1, f"rows skipped: {shown} -> {now}"
        elif not up and (was_bottom, was_inside) != (last, 1):
            assert (bottom, inside) > (was_bottom, was_inside), f"stuck or back: {shown} -> {now}"
            assert top <= was_bottom + 1, f"rows skipped: {shown} -> {now}"
        assert len(app.query(BubbleWidget)) <= BUBBLE_LIMIT
        shown = now
        if up and top == 0 and view.scroll_y == 0:
            return steps
        if not up and bottom == last and view.at_bottom:
            return steps
    raise AssertionError(f"the end not reached in {most_steps} steps; at {shown}")


async def test_page_keys_scroll_from_the_newest_row_to_the_first_and_back(
    tmp_path: Path,
) -> None:
    """The audit's case: 1,000 rows at 80x24. PageUp used to stop at row 520 for good."""
    app = await long_session(tmp_path, 1000)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        await settle(pilot)
        assert visible_rows(app)[-1] == 999
        view.focus()
        await settle(pilot)
        await travel(pilot, "pageup", up=True, last=999, most_steps=400)
        assert view.mounted_seqs()[0] == 1 and not view.more_before
        assert view.detached
        await travel(pilot, "pagedown", up=False, last=999, most_steps=400)
        assert not view.detached and view.at_bottom
        assert view.mounted_seqs()[-1] == 1000


async def test_the_mouse_wheel_scrolls_from_the_newest_row_to_the_first_and_back(
    tmp_path: Path,
) -> None:
    app = await long_session(tmp_path, 300)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        await settle(pilot)
        await travel(pilot, wheel, up=True, last=299, most_steps=1000)
        assert view.mounted_seqs()[0] == 1 and view.detached
        await travel(pilot, wheel, up=False, last=299, most_steps=1000)
        assert not view.detached and view.at_bottom


async def test_the_place_is_kept_by_the_layout_after_the_change_not_the_one_before(
    tmp_path: Path,
) -> None:
    """Rows evicted above the view, and the place put back at once, before the screen laid
    the change out (a page load's `_restore` once ran that early, under load): it waits
    for the layout, and the same rows stay on screen. By the old regions nothing seemed to
    have moved, and a wheel notch down jumped 113 rows."""
    app = await long_session(tmp_path, 300)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        await settle(pilot)
        view.scroll_to(y=view.max_scroll_y // 2, animate=False, immediate=True)
        await settle(pilot)
        before = visible_rows(app)
        anchor = view._anchor()
        await view._unmount([bubble.key for bubble in list(view.model)[:40]])
        view._restore(anchor)
        await settle(pilot)
        await pilot.pause()
        assert visible_rows(app) == before


async def test_home_and_end_jump_to_the_first_and_the_newest_message(tmp_path: Path) -> None:
    app = await long_session(tmp_path, 1000)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        view.focus()
        await pilot.press("home")
        await settle(pilot)
        assert visible_rows(app)[0] == 0 and view.scroll_y == 0
        assert len(view.widgets) <= BUBBLE_LIMIT and view.detached
        await pilot.press("pagedown")  # and scrolling on from there works
        await settle(pilot)
        assert visible_rows(app)[0] > 0
        await pilot.press("end")
        await settle(pilot)
        assert visible_rows(app)[-1] == 999 and view.at_bottom and not view.detached
        app.query_one(Composer).focus()  # Ctrl+Home and Ctrl+End from the prompt too
        await pilot.press("ctrl+home")
        await settle(pilot)
        assert visible_rows(app)[0] == 0
        await pilot.press("ctrl+end")
        await settle(pilot)
        assert visible_rows(app)[-1] == 999
        assert isinstance(app.focused, Composer)


async def test_the_live_turn_stays_pinned_while_the_user_reads_history(tmp_path: Path) -> None:
    """A reply streams while the user pages far up: its bubble is never evicted, every
    frame lands in it, and back at the bottom it is the same live widget, equal to the
    store."""
    app = await long_session(tmp_path, 1000)
    reply = "".join(f"Paragraph {n}: " + "streamed text " * 8 + "\n\n" for n in range(40))
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        session = app.current or ""
        store = local(app).store

        async def stream(text: str) -> None:
            for index in range(0, len(text), 7):
                chunk = text_update("agent_message_chunk", text[index : index + 7])
                frames = await store.apply(chunk_from_update(session, chunk))
                app.engine_listener(FramesEvent(session, tuple(frames)))

        _, frames = await store.begin_turn(session, "write a long reply")
        app.engine_listener(FramesEvent(session, tuple(frames)))
        half = len(reply) // 2
        await stream(reply[:half])
        await wait_until(lambda: any(b.kind == "agent" for b in view.model))
        await settle(pilot)
        key = next(b.key for b in view.model if b.kind == "agent")
        widget = view.widgets[key]
        assert isinstance(widget, AgentBubble) and widget.live
        view.focus()
        for _ in range(60):  # far up: the window detaches from the tail
            await pilot.press("pageup")
            await settle(pilot)
        assert view.detached and visible_rows(app)
        assert view.widgets.get(key) is widget, "the live reply was evicted"
        await stream(reply[half:])
        await wait_until(lambda: view.model.get(key) is not None and widget.text == reply)
        assert view.model.get(key) is not None
        await pilot.press("end")
        await settle(pilot)
        assert view.widgets.get(key) is widget and widget.live
        await store.end_turn(session)
        row = await store.row(session, key)
        assert row is not None and row.text == reply == widget.text
        assert len(view.widgets) <= BUBBLE_LIMIT + 2


async def test_tab_reaches_the_transcript_in_one_press_and_bubbles_are_not_in_the_chain(
    tmp_path: Path,
) -> None:
    app = await long_session(tmp_path, 0, turns=40)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) == 80)
        await settle(pilot)
        chain = app.screen.focus_chain
        assert not [w for w in chain if isinstance(w, BubbleWidget)]
        assert len(chain) <= 4
        composer = app.query_one(Composer)
        assert focus_of(app) is composer
        before = view.scroll_y
        await pilot.press("tab")
        assert focus_of(app) is view
        assert view.scroll_y == before  # focusing the transcript does not move it
        await pilot.press("shift+tab")
        assert focus_of(app) is composer
        await pilot.press("tab", "tab")
        assert isinstance(focus_of(app), SessionRail)
        await pilot.press("tab")
        assert focus_of(app) is composer
        await pilot.press("tab", "up")  # a bubble focused: Tab and Shift+Tab still work
        await pilot.pause()
        assert isinstance(focus_of(app), BubbleWidget)
        await pilot.press("shift+tab")
        assert focus_of(app) is composer


async def test_up_and_down_move_between_bubbles_in_the_transcript(tmp_path: Path) -> None:
    app = await long_session(tmp_path, 0, turns=40)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) == 80)
        await settle(pilot)
        newest = list(view.widgets.values())[-1]
        await pilot.press("tab", "up")
        await pilot.pause()
        assert app.focused is newest  # the last bubble in view
        seqs = [newest.seq]
        for key in ("up", "k", "up", "up"):
            await pilot.press(key)
            await pilot.pause()
            focused = app.focused
            assert isinstance(focused, BubbleWidget)
            seqs.append(focused.seq)
            assert view.scrollable_content_region.contains_region(focused.region)
        assert seqs == sorted(seqs, reverse=True) and len(set(seqs)) == 5
        await pilot.press("down", "j")
        await pilot.pause()
        assert isinstance(app.focused, BubbleWidget) and app.focused.seq == seqs[-3]
        first = next(iter(view.widgets.values()))
        for _ in range(100):  # all the way up, one bubble at a time
            await pilot.press("up")
            if app.focused is first:
                break
        await pilot.pause()
        assert app.focused is first
        assert view.scrollable_content_region.contains_region(first.region)


async def test_down_reads_a_bubble_taller_than_the_view_before_moving_on(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    long_reply = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(60))

    async def build(engine: Engine) -> None:
        await add_session(
            engine, project, "tall", [("first", "short"), ("second", long_reply), ("third", "ok")]
        )

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) == 6)
        await settle(pilot)
        view.focus()
        await pilot.press("home", "down")
        await pilot.pause()
        tall = next(w for w in view.widgets.values() if w.text == long_reply)
        for _ in range(10):
            if app.focused is tall:
                break
            await pilot.press("down")
            await pilot.pause()
        assert app.focused is tall
        window = view.scrollable_content_region
        assert window.y <= tall.region.y < window.bottom  # its first line in view
        tops = [view.scroll_y]
        for _ in range(40):
            await pilot.press("down")
            await pilot.pause()
            tops.append(view.scroll_y)
            if focus_of(app) is not tall:
                break
        assert len(tops) > 3 and tops == sorted(tops)  # read through, half a view a press
        assert isinstance(app.focused, BubbleWidget) and app.focused.text == "third"


async def test_page_keys_in_a_one_line_prompt_scroll_the_transcript(tmp_path: Path) -> None:
    app = await long_session(tmp_path, 300)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        await settle(pilot)
        composer = app.query_one(Composer)
        composer.focus()
        composer.text = "a draft"
        await pilot.pause()
        bottom = view.scroll_y
        await pilot.press("pageup")
        await settle(pilot)
        assert view.scroll_y < bottom
        assert app.focused is composer and composer.text == "a draft"
        await pilot.press("pagedown")
        await settle(pilot)
        assert view.scroll_y == bottom
        one_line = composer.size.height
        composer.text = "line one\nline two\nline three"
        composer.move_cursor((2, 0))
        await settle(pilot)
        # The prompt grew: the transcript is shorter once the screen is laid out again,
        # and still shows its end (a loaded machine may take more than a pause for that).
        await wait_until(
            lambda: composer.size.height > one_line and view.scroll_y == view.max_scroll_y
        )
        bottom = view.scroll_y
        await pilot.press("pageup")  # a longer prompt pages its own lines
        await settle(pilot)
        assert view.scroll_y == bottom
        assert composer.cursor_location[0] == 0


async def test_bubbles_scrolled_away_leave_nothing_behind(tmp_path: Path) -> None:
    """Evicted bubbles are gone for good: no style cache (with the lines it rendered)
    outlives its widget. Textual keeps the last 1,024 that painted in an lru_cache keyed
    by the cache itself, which made RSS grow with the length of the transcript."""
    app = await long_session(tmp_path, 600)
    async with app.run_test(size=SMALL) as pilot:
        view = view_of(app)
        await wait_until(lambda: len(view.model) > 0)
        await settle(pilot)
        view.focus()
        await travel(pilot, "pageup", up=True, last=599, most_steps=200)
        await pilot.press("end")
        await settle(pilot)
        gc.collect()
        alive = gc.get_objects()
        owned = {id(styles_cache_of(widget)) for widget in alive if isinstance(widget, Widget)}
        orphans = [cache for cache in alive if is_styles_cache(cache) and id(cache) not in owned]
        assert len(orphans) <= 5, f"{len(orphans)} style caches outlive their widgets"
