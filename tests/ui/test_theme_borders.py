"""Every border stands out from what it sits on, in every theme Cockpit offers: its own
(themes/) and Textual's, dracula among them (whose unfocused border was a shade of its
surface: the rail's edge vanished).

Two measures of one rule (WCAG 2's 3:1 for what one must see): the theme's resolved
colours of each border and its backgrounds (`cockpit.ui.theme_borders.BORDERS`), and the
real screen, every cell of every widget's border as the terminal shows it
(`tests.support.screen_colours`, whose 16-colour palette is another than the app's: a
dark terminal's, so the light ANSI theme, made for a light terminal, is checked by its
colours only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.theme import BUILTIN_THEMES
from textual.widget import Widget

from cockpit.paths import bundled_dir
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from cockpit.ui.theme_borders import BORDER_CONTRAST, border_problems
from cockpit.ui.themes import ANSI_ON_DARK, ANSI_ON_LIGHT
from tests.support.screen_colours import Cell, contrast, describe, screen_cells
from tests.support.ui_helpers import make_app, ready, settled

EVERY_THEME = sorted(
    {path.stem for path in bundled_dir("themes").glob("*.toml")} | set(BUILTIN_THEMES)
)
NO_BORDER = {"", "none", "hidden", "blank"}


def border_cells(widget: Widget, cells: dict[tuple[int, int], Cell]) -> list[Cell]:
    """The cells of the widget's visible border edges (its own region's rim)."""
    region = widget.region
    if not region.width or not region.height:
        return []
    styles = widget.styles
    edges = {
        "top": [(x, region.y) for x in range(region.x, region.right)],
        "bottom": [(x, region.bottom - 1) for x in range(region.x, region.right)],
        "left": [(region.x, y) for y in range(region.y, region.bottom)],
        "right": [(region.right - 1, y) for y in range(region.y, region.bottom)],
    }
    found: list[Cell] = []
    for edge, places in edges.items():
        kind, _ = getattr(styles, f"border_{edge}")
        if kind in NO_BORDER:
            continue
        found.extend(cells[place] for place in places if place in cells)
    return [cell for cell in found if cell.char.strip()]


def faint_borders(app: CockpitApp) -> set[str]:
    """`widget: fg on bg (ratio)` for every border glyph on screen below 3:1."""
    cells = {(cell.x, cell.y): cell for cell in screen_cells(app)}
    faint: set[str] = set()
    for widget in app.screen.query("*"):
        if not widget.display or not widget.region:
            continue
        for cell in border_cells(widget, cells):
            if app.screen.get_widget_at(cell.x, cell.y)[0] is not widget:
                continue  # covered, or the border of a widget scrolled off
            fg, bg = cell.seen("truecolor")
            ratio = contrast(fg, bg)
            if ratio < BORDER_CONTRAST:
                faint.add(f"{describe(widget)}: {fg.hex} on {bg.hex} ({ratio:.2f})")
    return faint


def test_every_theme_is_checked() -> None:
    assert {"cockpit-dark", "cockpit-light", "cockpit-ansi", "dracula"} <= set(EVERY_THEME)


async def test_every_border_reads_in_every_theme_by_its_colours(tmp_path: Path) -> None:
    """Each border colour against each background it is drawn on, as the app resolves
    them for its stylesheet."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = make_app(tmp_path, folder)
    seen: dict[str, Any] = {}
    async with app.run_test(size=(80, 24)):
        await ready(app)
        assert set(EVERY_THEME) <= set(app.available_themes)
        for theme in EVERY_THEME:
            app.theme = theme
            palette = ANSI_ON_DARK if app.current_theme.dark else ANSI_ON_LIGHT
            problems = border_problems(app.get_css_variables(), palette)
            if problems:
                seen[theme] = problems
    assert not seen, "\n".join(f"{where}: {what}" for where, what in sorted(seen.items()))


async def test_every_border_on_screen_reads_in_every_theme(tmp_path: Path) -> None:
    """The real screen at 80x24 in each theme: the rail's edges without the keyboard and
    with it, the prompt's frame with it and without, the footer's rule."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = make_app(tmp_path, folder)
    seen: dict[str, set[str]] = {}
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app)
        for theme in EVERY_THEME:
            app.theme = theme
            if app.current_theme.ansi and not app.current_theme.dark:
                continue
            for focused in (Composer, SessionRail):
                app.query_one(focused).focus()
                await settled(pilot)
                faint = faint_borders(app)
                if faint:
                    seen[f"{theme}, {focused.__name__} focused"] = faint
    assert not seen, "\n".join(f"{where}: {what}" for where, what in sorted(seen.items()))
