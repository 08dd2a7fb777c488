"""Every theme stays legible after Textual reduces it to 256 and to 16 colours (over SSH,
TERM=xterm-256color without COLORTERM, or TERM=xterm), and the focused bubble shows.

The real app is rendered headless in each bundled theme, through every view (the
transcript with every kind of bubble, the rail in every state, popups, toasts, dialogs),
and every cell of the screen is checked as the terminal would show it at each depth
(`tests.support.screen_colours` says how): text at least 4.5:1 against its background, any other
glyph (borders, bars, status marks) at least 3:1, and a grey still a grey."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.ansi import AnsiDecoder
from rich.color import Color
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.permission_prompt import PermissionPrompt
from tests.support.legibility_scenes import each_view, settle, tour_app
from tests.support.screen_colours import (
    DEPTHS,
    MARK_CONTRAST,
    TEXT_CONTRAST,
    Cell,
    contrast,
    describe,
    is_grey,
    is_neutral,
    kind_of,
    reduce,
    screen_cells,
    widget_at,
)
from tests.support.ui_helpers import make_app, ready, send, wait_until

THEMES = ("cockpit-dark", "cockpit-light", "cockpit-ansi")
SIZES = {"80x24": (80, 24), "140x90": (140, 90)}
"""80x24 (the rail compact, dialogs squeezed) and a screen tall enough to show the whole
transcript at once."""


def legibility_problems(app: CockpitApp, cells: list[Cell]) -> Counter[str]:
    """What does not read, counted: `depth: kind in widget: fg on bg (ratio < needed)`, or a
    grey that became a colour. A modal screen's backdrop and disabled widgets are let be
    (`widget_at`)."""
    problems: Counter[str] = Counter()
    for cell in cells:
        kind = kind_of(cell.char)
        true_fg, true_bg = cell.seen("truecolor")
        widget: Any = None
        for depth in DEPTHS:
            fg, bg = cell.seen(depth)
            if kind is not None and true_fg != true_bg:  # fg == bg: a blank on purpose
                needed = TEXT_CONTRAST if kind == "text" else MARK_CONTRAST
                ratio = contrast(fg, bg)
                if ratio < needed:
                    widget = widget_at(app, cell) if widget is None else widget
                    if widget is not None:
                        problems[
                            f"{depth}: {kind} in {describe(widget)}: {fg.hex} on {bg.hex}"
                            f" ({ratio:.2f} < {needed})"
                        ] += 1
            if depth != "truecolor" and not cell.style.reverse:
                shown_colours = [(cell.style.bgcolor, bg)]
                if kind is not None:
                    shown_colours.append((cell.style.color, fg))
                for original, reduced in shown_colours:
                    if original is None or original.triplet is None:
                        continue  # an ANSI colour: the terminal's own
                    if is_grey(original.triplet) and not is_neutral(reduced):
                        widget = widget_at(app, cell) if widget is None else widget
                        if widget is None:
                            continue  # a blend of a backdrop the theme did not choose
                        problems[
                            f"{depth}: the grey {original.triplet.hex} becomes {reduced.hex}"
                        ] += 1
    return problems


@pytest.mark.parametrize("size", SIZES, ids=str)
@pytest.mark.parametrize("theme", THEMES, ids=str)
async def test_every_theme_reads_at_every_colour_depth(
    tmp_path: Path, theme: str, size: str
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    app = await tour_app(tmp_path, folder)
    seen: dict[str, Counter[str]] = {}
    async with app.run_test(size=SIZES[size]) as pilot:
        async for shown_theme, view in each_view(app, pilot, (theme,)):
            assert app.theme == shown_theme
            problems = legibility_problems(app, screen_cells(app))
            if problems:
                seen[view] = problems
    assert seen == {}


def identity(colour: Color | None) -> tuple[object, ...]:
    """What a terminal is sent of a colour (its name aside)."""
    assert colour is not None
    return (colour.type, colour.number, colour.triplet)


@pytest.mark.parametrize("theme", THEMES, ids=str)
async def test_the_reduction_is_the_one_textual_sends(tmp_path: Path, theme: str) -> None:
    """`reduce` is what Textual writes to a terminal of each colour system: every colour of
    a real screen, sent through `Strip.render_ansi` and read back from the escape codes."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = await tour_app(tmp_path, folder)
    async with app.run_test(size=(120, 50)) as pilot:
        app.theme = theme
        await settle(pilot)
        colours = {c for cell in screen_cells(app) for c in (cell.style.color, cell.style.bgcolor)}
    colours.discard(None)
    assert len(colours) > 10
    decoder = AnsiDecoder()
    for colour in colours:
        assert isinstance(colour, Color)
        for depth, system in DEPTHS.items():
            # A fresh Style: render_ansi also caches its codes on the style it is given.
            codes = Strip.render_ansi(Style(color=colour, bgcolor=colour), system)
            sent = decoder.decode_line(f"\x1b[{codes}mx").spans[0].style
            assert isinstance(sent, Style)
            expected = identity(reduce(colour, depth))
            assert identity(sent.color) == expected, (colour, depth)
            assert identity(sent.bgcolor) == expected, (colour, depth)


# --- the focused bubble ---------------------------------------------------------------

FOCUS_BAR = "▌"


KINDS = {"-user", "-agent", "-thought", "-tool", "-plan", "-notice", "-error", "-permission"}


def left_column(cells: list[Cell], bubble: BubbleWidget) -> list[Cell]:
    """The cells of the bubble's first column that show, top to bottom."""
    transcript = bubble.parent
    assert isinstance(transcript, Widget)
    region = bubble.region.intersection(transcript.content_region)
    return [
        cell
        for cell in cells
        if cell.x == region.x and region.y <= cell.y < region.y + region.height
    ]


@pytest.mark.parametrize("theme", THEMES, ids=str)
async def test_the_focused_bubble_shows_at_every_depth(tmp_path: Path, theme: str) -> None:
    """Whichever bubble has the focus (user, agent, thought, tool card, plan, notice...),
    its first column is a bar from top to bottom that stands out from the bubble's own
    background by 3:1 at every depth, and no bubble without the focus has it."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = await tour_app(tmp_path, folder)
    checked: set[str] = set()
    async with app.run_test(size=(120, 90)) as pilot:
        app.theme = theme
        await settle(pilot)
        for bubble in list(app.query(BubbleWidget)):
            bubble.focus()
            bubble.scroll_visible(animate=False, immediate=True)
            await settle(pilot)
            assert app.focused is bubble
            cells = screen_cells(app)
            column = left_column(cells, bubble)
            assert column, describe(bubble)
            for cell in column:
                assert cell.char == FOCUS_BAR, (describe(bubble), cell)
                for depth in DEPTHS:
                    fg, bg = cell.seen(depth)
                    assert contrast(fg, bg) >= MARK_CONTRAST, (describe(bubble), depth, fg, bg)
            for other in app.query(BubbleWidget):
                if other is not bubble and other.region.height:
                    assert all(c.char != FOCUS_BAR for c in left_column(cells, other))
            checked |= KINDS & set(bubble.classes)
    assert checked == KINDS


@pytest.mark.parametrize("theme", THEMES, ids=str)
async def test_a_permission_prompt_reads_at_every_colour_depth(tmp_path: Path, theme: str) -> None:
    """The inline question of a real demo agent: its options as buttons, the diff it would
    make, the keys hint; focused, and with the focus back on the prompt."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = make_app(tmp_path, folder)
    seen: dict[str, Counter[str]] = {}
    async with app.run_test(size=(100, 34)) as pilot:
        await ready(app)
        app.theme = theme
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        for view in ("prompt", "question"):
            if view == "question":
                app.query_one(PermissionPrompt).focus()
            for _ in range(3):
                await pilot.pause(0.05)
            problems = legibility_problems(app, screen_cells(app))
            if problems:
                seen[view] = problems
    assert seen == {}
