"""What a terminal shows of a running Textual app, cell by cell, at each colour depth.

The screen is taken as Textual composes it for the terminal (the compositor's full update,
the same call `App.export_screenshot` makes), after every line filter. Each colour is then
reduced as Textual reduces it before writing it: `Strip.render_ansi` sends
`rich.color.Color.downgrade(color_system)` of every foreground and background, where the
colour system is the one Rich detects from TERM and COLORTERM (`Console.color_system`).
`test_the_reduction_is_the_one_textual_sends` checks that this module's reduction equals
what `Strip.render_ansi` writes.

A reduced colour is shown by the terminal: the 256-colour cube and grey ramp are the same
in every terminal (Rich's `EIGHT_BIT_PALETTE`), while the 16 ANSI colours and the default
foreground and background are the terminal's own. For those the checks use one
representative palette, `SIXTEEN_COLOURS`: the default colours of PuTTY, the SSH client of
many, with its default foreground (colour 7) on black.
Rich picks the colour to send by matching against another palette (its `STANDARD_PALETTE`,
the VGA colours), so a colour is checked as the terminal shows the index Rich chose, as it
would be over SSH.

Contrast is WCAG 2's ratio of relative luminances.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from rich._palettes import EIGHT_BIT_PALETTE
from rich.color import Color, ColorSystem, ColorType
from rich.color_triplet import ColorTriplet
from rich.segment import Segment
from rich.style import Style
from textual.app import App
from textual.constants import DIM_FACTOR
from textual.screen import ModalScreen
from textual.widget import Widget

from cockpit.compat.textual_private import full_screen_update

DEPTHS: dict[str, ColorSystem] = {
    "truecolor": ColorSystem.TRUECOLOR,
    "256": ColorSystem.EIGHT_BIT,
    "16": ColorSystem.STANDARD,
}
"""The colour systems Rich detects: COLORTERM=truecolor, TERM=xterm-256color, TERM=xterm."""

SIXTEEN_COLOURS: tuple[ColorTriplet, ...] = tuple(
    ColorTriplet(*rgb)
    for rgb in (
        (0, 0, 0),
        (187, 0, 0),
        (0, 187, 0),
        (187, 187, 0),
        (0, 0, 187),
        (187, 0, 187),
        (0, 187, 187),
        (187, 187, 187),
        (85, 85, 85),
        (255, 85, 85),
        (85, 255, 85),
        (255, 255, 85),
        (85, 85, 255),
        (255, 85, 255),
        (85, 255, 255),
        (255, 255, 255),
    )
)
"""PuTTY's default colours, black to white then their bold (bright) variants."""
DEFAULT_FOREGROUND = SIXTEEN_COLOURS[7]
DEFAULT_BACKGROUND = SIXTEEN_COLOURS[0]

TEXT_CONTRAST = 4.5
MARK_CONTRAST = 3.0

# A dim foreground is taken as DIM_FACTOR of it over its background: Textual's own model
# of dim text, with which it draws dim text in a truecolour theme.


def reduce(colour: Color, depth: str) -> Color:
    """`colour` as Textual sends it at `depth` (what `Strip.render_ansi` writes)."""
    return colour.downgrade(DEPTHS[depth])


def shown(colour: Color | None, *, foreground: bool) -> ColorTriplet:
    """The colour a terminal with `SIXTEEN_COLOURS` shows for a colour it was sent."""
    if colour is None or colour.type == ColorType.DEFAULT:
        return DEFAULT_FOREGROUND if foreground else DEFAULT_BACKGROUND
    if colour.type == ColorType.TRUECOLOR:
        assert colour.triplet is not None
        return colour.triplet
    assert colour.number is not None
    if colour.number < 16:
        return SIXTEEN_COLOURS[colour.number]
    return EIGHT_BIT_PALETTE[colour.number]


@cache
def luminance(colour: ColorTriplet) -> float:
    """WCAG 2 relative luminance."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = colour
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


@cache
def contrast(first: ColorTriplet, second: ColorTriplet) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def blend(foreground: ColorTriplet, background: ColorTriplet, share: float) -> ColorTriplet:
    """`share` of `foreground` over `background`."""
    return ColorTriplet(
        *(round(b + (f - b) * share) for f, b in zip(foreground, background, strict=True))
    )


def is_grey(colour: ColorTriplet, tolerance: int = 24) -> bool:
    """A colour the eye takes for a grey: its channels differ by at most `tolerance`."""
    return max(colour) - min(colour) <= tolerance


def is_neutral(colour: ColorTriplet) -> bool:
    """A true grey (black and white included)."""
    return colour.red == colour.green == colour.blue


@cache
def kind_of(char: str) -> str | None:
    """ "text" for letters, digits and ASCII punctuation, "mark" for any other glyph (box
    drawing, blocks, symbols, non-ASCII punctuation such as `·` and `…`), None for blanks."""
    if not char or char.isspace() or char == "\u00a0":
        return None
    category = unicodedata.category(char)
    if category[0] in "LN" or (char.isascii() and category[0] in "PS"):
        return "text"
    return "mark"


@dataclass(frozen=True)
class Cell:
    """One cell of the screen: its glyph and its style as Textual composed it."""

    x: int
    y: int
    char: str
    style: Style

    def seen(self, depth: str) -> tuple[ColorTriplet, ColorTriplet]:
        """(foreground, background) as the terminal shows them at `depth`: colours
        reduced, reverse video applied, a dim foreground mixed into its background."""
        return seen_colours(self.style, depth)


@cache
def seen_colours(style: Style, depth: str) -> tuple[ColorTriplet, ColorTriplet]:
    """`Cell.seen` of any cell with `style`: a screen holds few styles in many cells, and
    a check asks each cell at every depth, so the answer is kept per style."""
    fore = style.color
    back = style.bgcolor
    foreground = shown(reduce(fore, depth) if fore else None, foreground=True)
    background = shown(reduce(back, depth) if back else None, foreground=False)
    if style.reverse:
        foreground, background = background, foreground
    if style.dim:
        foreground = blend(foreground, background, DIM_FACTOR)
    return foreground, background


def screen_cells(app: App[Any]) -> list[Cell]:
    """Every cell of the app's screen, as it would be written to the terminal."""
    update = full_screen_update(app)
    cells: list[Cell] = []
    for y, line in enumerate(update.strips):  # type: ignore[union-attr]
        x = 0
        for strip in line:
            for segment in strip:
                cells.extend(_segment_cells(segment, x, y))
                x += segment.cell_length
    return cells


def _segment_cells(segment: Segment, x: int, y: int) -> Iterator[Cell]:
    text, style, control = segment
    if control:
        return
    style = style or Style.null()
    for char in text:
        yield Cell(x, y, char, style)
        x += max(Segment(char).cell_length, 1)


def widget_at(app: App[Any], cell: Cell) -> Widget | None:
    """The widget of the top screen that drew the cell; None for a modal screen's backdrop
    (what shows through it is deliberately faint) and for a disabled widget (exempt from
    contrast rules, as in WCAG)."""
    screen = app.screen
    try:
        widget, _ = screen.get_widget_at(cell.x, cell.y)
    except Exception:  # NoWidget
        return None
    if widget is screen and isinstance(screen, ModalScreen):
        return None
    if widget.disabled:
        return None
    return widget


def describe(widget: Widget | None) -> str:
    """A short name for messages: `ToolCard#id.classes`."""
    if widget is None:
        return "?"
    name = type(widget).__name__
    if widget.id:
        name += f"#{widget.id}"
    return name + "".join(f".{c}" for c in sorted(widget.classes) if not c.startswith("-theme"))
