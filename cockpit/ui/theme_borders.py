"""Every border Cockpit draws stands out from what it sits on, in any theme.

A theme chooses its border colours for its own widgets: dracula's unfocused border is a
shade darker than its surface, so the rail's edge vanished. The rule here is WCAG 2's 3:1
for graphical objects, measured on the theme's resolved colours; a border below it is
moved towards the theme's foreground until it reaches it. No Textual app here: the app
applies `visible_borders` to the variables it hands its stylesheet.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.terminal_theme import TerminalTheme
from textual.color import Color, ColorParseError

BORDER_CONTRAST = 3.0
"""WCAG 2's minimum for the parts of an interface one must see to use it."""

BORDERS: Mapping[str, tuple[str, ...]] = {
    # the rail's edges, the prompt's frame, the footer's and the command palette's rules
    "border-blurred": ("surface", "panel", "background", "footer-background"),
    # the same with the keyboard in them, and a dialog's frame
    "border": ("surface", "panel", "background"),
    "bubble-user-border": ("bubble-user-background",),
    "bubble-focus-border": ("bubble-focus-background",),
}
"""Each border colour Cockpit draws, and the backgrounds it is drawn on."""

_STEPS = 10
"""How finely a border moves towards the foreground (a tenth at a time)."""


def contrast_ratio(first: Color, second: Color) -> float:
    """WCAG 2 contrast ratio of two opaque colours, 1 to 21."""

    def luminance(colour: Color) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        red, green, blue = colour.rgb
        return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def resolve(
    value: str, palette: TerminalTheme, *, foreground: bool, over: Color | None = None
) -> Color | None:
    """The colour a variable's value shows as: an ANSI colour as `palette` draws it (the
    palette the app draws ANSI colours with), a colour with an opacity as it shows over
    `over` (else the palette's background); None for what is no colour (`auto`, a
    transparent one)."""
    words = value.split()
    if not words:
        return None
    try:
        colour = Color.parse(words[0])
    except ColorParseError:
        return None
    if colour.ansi is not None:
        if colour.ansi == -1:
            default = palette.foreground_color if foreground else palette.background_color
            return Color(*default)
        return Color(*palette.ansi_colors[colour.ansi])
    if colour.a == 0:
        return None
    base = over or Color(*palette.background_color)
    if len(words) == 2 and words[1].endswith("%"):
        colour = colour.multiply_alpha(float(words[1][:-1]) / 100)
    return base + colour if colour.a < 1 else colour


def border_problems(
    variables: Mapping[str, str], palette: TerminalTheme
) -> list[tuple[str, str, float]]:
    """(border, background, ratio) of every border below `BORDER_CONTRAST` on a
    background it is drawn on."""
    problems = []
    for border, backgrounds in BORDERS.items():
        colour = resolve(variables.get(border, ""), palette, foreground=True)
        if colour is None:
            continue
        for background, under in _backgrounds(variables, palette, backgrounds):
            if under is None:
                continue
            ratio = contrast_ratio(colour, under)
            if ratio < BORDER_CONTRAST:
                problems.append((border, background, ratio))
    return problems


def _backgrounds(
    variables: Mapping[str, str], palette: TerminalTheme, names: tuple[str, ...]
) -> list[tuple[str, Color | None]]:
    """Each background named, resolved; a translucent one over the theme's background."""
    page = resolve(variables.get("background", ""), palette, foreground=False)
    return [
        (name, resolve(variables.get(name, ""), palette, foreground=False, over=page) or page)
        for name in names
    ]


WHITE = Color(255, 255, 255)
BLACK = Color(0, 0, 0)


def _moved(colour: Color, targets: list[Color], backgrounds: list[Color]) -> Color:
    """`colour` moved the least towards the first target that takes it to 3:1 on every
    background (a footer of the lead colour may need white where the text's grey fails);
    the last target when none does."""
    candidate = colour
    for target in targets:
        for step in range(1, _STEPS + 1):
            candidate = colour.blend(target, step / _STEPS)
            if all(contrast_ratio(candidate, under) >= BORDER_CONTRAST for under in backgrounds):
                return candidate
    return candidate


def visible_borders(variables: Mapping[str, str], palette: TerminalTheme) -> dict[str, str]:
    """New values for the borders below `BORDER_CONTRAST`: each moved towards the theme's
    foreground, a tenth at a time, until it reaches 3:1 on all its backgrounds (towards
    white, then black, when the foreground does not get there). An ANSI colour becomes
    the theme's foreground: the terminal's palette decides how it shows. Borders that
    read are left alone."""
    fixed: dict[str, str] = {}
    foreground = resolve(variables.get("foreground", ""), palette, foreground=True)
    if foreground is None:
        return fixed
    for border, _, _ in border_problems(variables, palette):
        if border in fixed:
            continue
        colour = resolve(variables[border], palette, foreground=True)
        assert colour is not None  # it has a problem, so it resolved
        if Color.parse(variables[border].split()[0]).ansi is not None:
            # The terminal's palette decides an ANSI theme's colours: its foreground reads.
            fixed[border] = variables["foreground"]
            continue
        backgrounds = [
            under for _, under in _backgrounds(variables, palette, BORDERS[border]) if under
        ]
        fixed[border] = _moved(colour, [foreground, WHITE, BLACK], backgrounds).hex6
    return fixed
