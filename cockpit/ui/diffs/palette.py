"""The colours of a diff: the theme's diff colours (`DiffStyles`, read from the app's CSS
variables and cached per theme) resolved into the Rich styles a rendering draws with
(`DiffPalette`), and the code theme that highlights code in diffs and in Markdown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.color import Color as RichColor
from rich.style import Style
from rich.syntax import RICH_SYNTAX_THEMES

if TYPE_CHECKING:
    from textual.widget import Widget

CODE_THEME = "cockpit"
"""How code is highlighted, in diffs and in Markdown: in the 16 ANSI colours, which the
app draws from its ANSI palette (Cockpit's, chosen to read on its backgrounds and diff
rows at every colour depth) or, in an ANSI theme, the terminal from its own (no Pygments
style reads on every diff row). It is Rich's "ansi_dark" with bright magenta for its
blues and bright red for its red: blue and red are too dark on a dark terminal's black
in common palettes. Registered with Rich by name, so `Markdown(code_theme=...)` takes it
too."""
_TOO_DARK = {"blue": "bright_magenta", "bright_blue": "bright_magenta", "red": "bright_red"}
RICH_SYNTAX_THEMES[CODE_THEME] = {
    token: style + Style(color=_TOO_DARK[style.color.name])
    if style.color is not None and style.color.name in _TOO_DARK
    else style
    for token, style in RICH_SYNTAX_THEMES["ansi_dark"].items()
}


@dataclass(frozen=True)
class DiffStyles:
    """The theme's diff colours, as a theme writes them ("#1E3A2E" or "ansi_green"). The
    defaults are those of `cockpit-dark`. `syntax_theme` is `CODE_THEME` (code in the
    ANSI colours), another of Rich's code themes or a Pygments style name: its token
    colours must read on the app's background and on the tinted rows."""

    added_background: str = "#202A25"
    removed_background: str = "#2B2225"
    added_foreground: str = "#A3DB96"
    removed_foreground: str = "#F4A1A8"
    gutter: str = "#A4AAB4"
    syntax_theme: str = CODE_THEME

    @classmethod
    def from_variables(
        cls, variables: Mapping[str, str], *, gutter: str = "", syntax_theme: str = ""
    ) -> DiffStyles:
        """Styles from an app's CSS variables (`App.get_css_variables()`): the four
        `diff-*` colours, `foreground-muted` for the gutter and `CODE_THEME` unless
        given. What is missing keeps its default."""
        defaults = cls()
        background = variables.get("background", "")
        return cls(
            added_background=variables.get("diff-added-background", defaults.added_background),
            removed_background=variables.get(
                "diff-removed-background", defaults.removed_background
            ),
            added_foreground=variables.get("diff-added-foreground", defaults.added_foreground),
            removed_foreground=variables.get(
                "diff-removed-foreground", defaults.removed_foreground
            ),
            gutter=gutter or _muted(variables.get("foreground-muted", ""), background),
            syntax_theme=syntax_theme or CODE_THEME,
        )


def _muted(value: str, background: str) -> str:
    """A muted colour made opaque over the background (Textual writes `foreground-muted`
    with an alpha, which Rich cannot show); ANSI themes, whose muted colour is not a colour,
    get the terminal's grey."""
    from textual.color import Color, ColorParseError

    try:
        colour = Color.parse(value)
    except ColorParseError:
        return "ansi_bright_black" if background.startswith("ansi") else DiffStyles.gutter
    if colour.a >= 1 or colour.ansi is not None:
        return value
    try:
        return (Color.parse(background) + colour).hex
    except ColorParseError:
        return colour.with_alpha(1).hex


@dataclass(frozen=True, slots=True)
class LineTint:
    """How one kind of line is drawn."""

    row: Style  # behind the whole row
    mark: Style  # the +/- sign
    text: Style | None  # over the code, when no background carries the meaning
    emphasis: Style  # the changed words of a line paired with its replacement


@dataclass(frozen=True, slots=True)
class DiffPalette:
    """The resolved styles of one render: per kind of line, the gutter, the header."""

    tints: Mapping[str, LineTint]
    gutter: Style
    header: Style
    syntax_theme: str


def _colour(value: str) -> RichColor | None:
    """A theme colour as Rich's, None for the terminal's default or a colour that does not
    parse (the theme loader reports bad colours; a diff must still show)."""
    from textual.color import Color, ColorParseError

    try:
        colour = Color.parse(value).rich_color
    except ColorParseError:
        return None
    return None if colour.is_default else colour


def _tint(background: str, foreground: str) -> LineTint:
    """The drawing of added or removed lines. With a background the code keeps its syntax
    colours; without one (ANSI themes) the code takes the foreground colour, so the change
    still shows."""
    back = _colour(background)
    fore = _colour(foreground)
    colour = Style(color=fore)
    return LineTint(
        row=Style(bgcolor=back),
        mark=colour + Style(bold=True),
        text=None if back is not None else colour,
        emphasis=colour + Style(bold=True),
    )


def diff_palette(styles: DiffStyles) -> DiffPalette:
    """The Rich styles of a `DiffStyles`, resolved once per render."""
    added = _tint(styles.added_background, styles.added_foreground)
    removed = _tint(styles.removed_background, styles.removed_foreground)
    plain = LineTint(row=Style(), mark=Style(), text=None, emphasis=Style())
    return DiffPalette(
        tints={"added": added, "removed": removed, "context": plain},
        gutter=Style(color=_colour(styles.gutter)),
        header=Style(bold=True),
        syntax_theme=styles.syntax_theme,
    )


def diff_styles(widget: Widget) -> DiffStyles:
    """The diff colours of the app's current theme (cached per theme)."""
    app = widget.app
    key = app.theme
    cached = _DIFF_STYLES.get(key)
    if cached is None:
        cached = DiffStyles.from_variables(app.get_css_variables())
        _DIFF_STYLES[key] = cached
    return cached


_DIFF_STYLES: dict[str, DiffStyles] = {}
