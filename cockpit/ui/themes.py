"""Cockpit's themes: Textual `Theme`s read from TOML files.

The bundled themes live in `themes/`; users add or replace themes with files of the same
format in `themes/` inside Cockpit's config folder. Besides Textual's colours, every theme
carries the app variables (`APP_VARIABLES`) that Cockpit's stylesheet refers to. A bundled
theme must define them all; a user theme may leave some out and gets them from the bundled
theme of its kind, so a half-finished theme still looks right. A broken file is reported
(file, line, field) and skipped, never fatal.

It also holds the colour data the app sets beside its themes (how Rich content's ANSI
colours are drawn, Markdown's styles) and the rule for the theme to start in, which
depends on how many colours the terminal has.

This module only loads data: it imports nothing of Textual beyond `Theme` and `Color`
(and `ColorParseError`, beside it), nothing of Rich beyond its theme classes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.terminal_theme import TerminalTheme
from rich.theme import Theme as RichTheme
from textual.color import Color, ColorParseError
from textual.theme import Theme

from cockpit.config_file import error_line, key_line
from cockpit.config_file import where as file_and_line

DEFAULT_THEME = "cockpit-dark"
LIGHT_THEME = "cockpit-light"
ANSI_THEME = "cockpit-ansi"

APP_VARIABLES: tuple[str, ...] = (
    "bubble-user-background",
    "bubble-user-border",
    "bubble-agent-background",
    "bubble-thought-foreground",
    "bubble-notice-foreground",
    "bubble-error-foreground",
    "bubble-focus-background",
    "bubble-focus-border",
    "tool-foreground",
    "status-starting",
    "status-working",
    "status-needs-you",
    "status-unread",
    "status-idle",
    "status-error",
    "status-closed",
    "diff-added-background",
    "diff-removed-background",
    "diff-added-foreground",
    "diff-removed-foreground",
)

COLOUR_FIELDS: tuple[str, ...] = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
FLAG_FIELDS: tuple[str, ...] = ("dark", "ansi")
KNOWN_KEYS = frozenset({"name", *FLAG_FIELDS, *COLOUR_FIELDS, "variables"})

# Textual does not define these for an `ansi = true` theme. Its own stylesheet needs the
# first two in ANSI mode (without them the app fails to start; values as in its `ansi-dark`
# and `ansi-light`); the last two exist in every other theme (Textual 8.2.8 misspells
# "surface-actrive" in ANSI mode), so a stylesheet using them works in ANSI mode too.
_ANSI_VARIABLE_DEFAULTS: Mapping[bool, Mapping[str, str]] = {
    dark: {
        "ansi-background": "ansi_black" if dark else "ansi_white",
        "ansi-foreground": "ansi_white" if dark else "ansi_black",
        "surface-active": "ansi_default",
        "foreground-disabled": "ansi_bright_black",
    }
    for dark in (True, False)
}

# Theme names become the CSS class `-theme-NAME`, and `App.theme` splits on commas.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_VARIABLE_NAME = re.compile(r"[A-Za-z0-9_-]+")
_TEXT_STYLE_WORDS = frozenset(
    {"b", "blink", "bold", "dim", "i", "italic", "none", "not", "o", "overline", "reverse"}
    | {"strike", "u", "underline", "uu"}
)
_ALPHA = re.compile(r"\d+(\.\d+)?%")
_STYLE_NAME = re.compile(r"(^|-)style(-|$)")  # block-cursor-text-style, link-style-hover


# How the 16 ANSI colours that Rich content names (Markdown's links, quotes and code,
# highlighted code, a failed command's exit code) are drawn in a theme that is not ANSI
# (`App.ansi_theme_dark` and `App.ansi_theme_light`): Textual's defaults (Monokai's and
# Alabaster's) put a red and a blue on Cockpit's backgrounds that do not read. These do,
# on every bundled background, and stay legible when reduced to 256 or 16 colours (the
# greys stay greys). Black is the background of inline code.
ANSI_ON_DARK = TerminalTheme(
    (26, 29, 35),
    (216, 222, 233),
    [
        (30, 33, 39),
        (240, 120, 128),
        (152, 208, 138),
        (232, 176, 75),
        (138, 184, 245),
        (208, 168, 240),
        (144, 212, 222),
        (200, 203, 208),
    ],
    [
        (164, 168, 176),
        (245, 154, 160),
        (176, 224, 160),
        (240, 200, 104),
        (168, 200, 248),
        (224, 192, 248),
        (168, 224, 232),
        (230, 232, 235),
    ],
)
ANSI_ON_LIGHT = TerminalTheme(
    (251, 250, 247),
    (31, 35, 40),
    [
        (236, 236, 234),
        (168, 36, 36),
        (30, 110, 50),
        (92, 74, 26),
        (31, 80, 160),
        (128, 50, 150),
        (14, 100, 112),
        (80, 84, 90),
    ],
    [
        (90, 94, 100),
        (150, 30, 30),
        (25, 95, 45),
        (84, 66, 20),
        (25, 70, 145),
        (110, 40, 130),
        (10, 88, 100),
        (36, 41, 47),
    ],
)


# Rich's default styles for Markdown draw quotes and headings in magenta, links and their
# targets in blue: too dark on a dark terminal's black in common palettes. The bright colours
# read there, and Cockpit's ANSI palettes make them legible in its other themes too.
CONTENT_STYLES = RichTheme(
    {
        "markdown.block_quote": "bright_magenta",
        "markdown.h2": "bright_magenta underline",
        "markdown.h3": "bright_magenta bold",
        "markdown.h4": "bright_magenta italic",
        "markdown.link": "bright_cyan",
        "markdown.link_url": "bright_cyan underline",
    }
)


class ThemeError(ValueError):
    """A theme file that cannot be used; the message names the file and, where known, the
    line and field."""


def _where(origin: str, text: str, key: str) -> str:
    """`origin:line` when the key's line is known, else just `origin`."""
    return file_and_line(origin, key_line(text, key))


def _parse_toml(text: str, origin: str) -> dict[str, Any]:
    """The TOML document, or a ThemeError naming the file and line of the syntax error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ThemeError(f"{origin}:{error_line(error, text)}: not valid TOML: {error}") from None


def _check_colour(value: object, field: str, where: str) -> str:
    """`value` if it is a colour Textual understands; the message names field and value."""
    if not isinstance(value, str):
        raise ThemeError(f"{where}: {field} must be a colour string, not {value!r}")
    try:
        Color.parse(value)
    except ColorParseError as error:  # not a ValueError
        raise ThemeError(f"{where}: {field} = {value!r} is not a colour: {error}") from None
    return value


def _check_variable(value: object, name: str, where: str) -> str:
    """A variable's value as Textual's CSS takes it: a text style for `*-style*` variables,
    else a colour with an optional opacity ("#336699 40%", "auto 87%", "initial").
    Checked here because a bad value would otherwise stop the app's stylesheet loading."""
    field = f"variables.{name}"
    if not isinstance(value, str):
        raise ThemeError(f"{where}: {field} must be a string, not {value!r}")
    words = value.split()
    if _STYLE_NAME.search(name):
        if not words or any(word not in _TEXT_STYLE_WORDS for word in words):
            raise ThemeError(f"{where}: {field} = {value!r} is not a text style")
        return value
    if len(words) == 2 and _ALPHA.fullmatch(words[1]):
        words = words[:1]
    if len(words) == 1 and words[0] in ("auto", "initial"):
        return value
    if len(words) != 1:
        raise ThemeError(f"{where}: {field} = {value!r} is not a colour")
    _check_colour(words[0], field, where)
    return value


def _check_variables(raw: object, origin: str, text: str) -> dict[str, str]:
    """The `[variables]` table, every name and value checked."""
    if not isinstance(raw, dict):
        raise ThemeError(f"{_where(origin, text, 'variables')}: variables must be a table")
    variables: dict[str, str] = {}
    for name, value in raw.items():
        where = _where(origin, text, name)
        if not _VARIABLE_NAME.fullmatch(name):
            raise ThemeError(f"{where}: {name!r} is not a valid variable name")
        variables[name] = _check_variable(value, name, where)
    return variables


def _check_name(raw: object, origin: str, text: str) -> str:
    """The theme's name: required, and usable as a CSS class."""
    if raw is None:
        raise ThemeError(f"{origin}: name is missing")
    if not isinstance(raw, str) or not _NAME.fullmatch(raw):
        raise ThemeError(
            f"{_where(origin, text, 'name')}: name {raw!r} must be letters, digits, '-' or '_'"
        )
    return raw


def _check_flag(document: Mapping[str, Any], field: str, origin: str, text: str) -> bool:
    """A true/false field; `dark` is required (it picks defaults), `ansi` defaults to false."""
    if field not in document:
        if field == "dark":
            raise ThemeError(f"{origin}: dark is missing (true or false)")
        return False
    value = document[field]
    if not isinstance(value, bool):
        raise ThemeError(f"{_where(origin, text, field)}: {field} must be true or false")
    return value


def theme_from_toml(text: str, origin: str, *, require_variables: bool = True) -> Theme:
    """The Theme a theme file describes. Raises ThemeError naming `origin` (and the line,
    field and value where known) for bad TOML, an unknown key, a missing field, a bad
    colour, or, when `require_variables`, a missing app variable."""
    document = _parse_toml(text, origin)
    unknown = sorted(key for key in document if key not in KNOWN_KEYS)
    if unknown:
        key = unknown[0]
        known = ", ".join(sorted(KNOWN_KEYS))
        raise ThemeError(f"{_where(origin, text, key)}: unknown key {key!r} (known: {known})")
    name = _check_name(document.get("name"), origin, text)
    dark = _check_flag(document, "dark", origin, text)
    ansi = _check_flag(document, "ansi", origin, text)
    if "primary" not in document:
        raise ThemeError(f"{origin}: primary is missing")
    colours = {
        field: _check_colour(document[field], field, _where(origin, text, field))
        for field in COLOUR_FIELDS
        if field in document
    }
    variables = _check_variables(document.get("variables", {}), origin, text)
    if require_variables:
        missing = [key for key in APP_VARIABLES if key not in variables]
        if missing:
            raise ThemeError(f"{origin}: [variables] is missing {', '.join(missing)}")
    if ansi:
        variables = {**_ANSI_VARIABLE_DEFAULTS[dark], **variables}
    return Theme(
        name=name,
        primary=colours["primary"],
        secondary=colours.get("secondary"),
        accent=colours.get("accent"),
        warning=colours.get("warning"),
        error=colours.get("error"),
        success=colours.get("success"),
        foreground=colours.get("foreground"),
        background=colours.get("background"),
        surface=colours.get("surface"),
        panel=colours.get("panel"),
        boost=colours.get("boost"),
        dark=dark,
        ansi=ansi,
        variables=variables,
    )


def fallback_variables(theme: Theme, themes: Iterable[Theme]) -> dict[str, str]:
    """The app variables of the bundled theme closest in kind to `theme` (cockpit-ansi for
    an ANSI theme, else cockpit-dark or cockpit-light): the values a theme that lacks them
    should use. Also what `App.get_theme_variable_defaults` can return so that Textual's
    own themes (nord, gruvbox...) work with Cockpit's stylesheet. Empty when none of the
    candidates is in `themes`."""
    by_name = {candidate.name: candidate for candidate in themes}
    order = [DEFAULT_THEME, LIGHT_THEME] if theme.dark else [LIGHT_THEME, DEFAULT_THEME]
    if theme.ansi:
        order.insert(0, ANSI_THEME)
    for name in order:
        source = by_name.get(name)
        if source is not None:
            return {key: source.variables[key] for key in APP_VARIABLES if key in source.variables}
    return {}


def _with_app_variables(theme: Theme, bundled: Iterable[Theme], origin: str) -> Theme:
    """`theme` with its missing app variables filled in from the matching bundled theme."""
    if all(name in theme.variables for name in APP_VARIABLES):
        return theme
    variables = {**fallback_variables(theme, bundled), **theme.variables}
    missing = [name for name in APP_VARIABLES if name not in variables]
    if missing:
        raise ThemeError(f"{origin}: [variables] is missing {', '.join(missing)}")
    return replace(theme, variables=variables)


def _load_file(path: Path, *, require_variables: bool) -> Theme:
    """The theme in `path`, whose name must be the file's stem (so users can find it)."""
    origin = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ThemeError(f"{origin}: cannot be read: {error}") from None
    theme = theme_from_toml(text, origin, require_variables=require_variables)
    if theme.name != path.stem:
        where = _where(origin, text, "name")
        raise ThemeError(f"{where}: name {theme.name!r} must match the file name {path.stem!r}")
    return theme


def _theme_files(folder: Path) -> list[Path]:
    """The `*.toml` files in `folder`, in name order; none if it is missing or unreadable."""
    try:
        return sorted(path for path in folder.glob("*.toml") if path.is_file())
    except OSError:
        return []


FEW_COLOURS = frozenset({"standard", "windows", None})
"""Rich's colour systems (`Console.color_system`) of a terminal with 16 colours or fewer
(TERM=xterm, linux, vt100..., a legacy Windows console, or none detected)."""


def startup_theme(saved: object, color_system: str | None, available: Iterable[str]) -> str:
    """The theme Cockpit starts in: the one the user chose (saved in the settings) while it
    exists; otherwise cockpit-ansi on a terminal of 16 colours or fewer, where any other
    theme is reduced to the nearest of 16 colours the terminal may not even show as
    expected, and cockpit-dark elsewhere. `color_system` is what Rich detected."""
    names = set(available)
    if isinstance(saved, str) and saved in names:
        return saved
    if color_system in FEW_COLOURS and ANSI_THEME in names:
        return ANSI_THEME
    return DEFAULT_THEME


def load_themes(bundled_dir: Path, user_dir: Path | None) -> tuple[list[Theme], list[str]]:
    """The bundled themes, then the user's (a user theme replaces the bundled one with its
    name), and one problem message per file that could not be used."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for path in _theme_files(bundled_dir):
        try:
            theme = _load_file(path, require_variables=True)
        except ThemeError as error:
            problems.append(str(error))
        else:
            themes[theme.name] = theme
    bundled = list(themes.values())
    for path in _theme_files(user_dir) if user_dir is not None else []:
        try:
            theme = _load_file(path, require_variables=False)
            themes[theme.name] = _with_app_variables(theme, bundled, str(path))
        except ThemeError as error:
            problems.append(str(error))
    return list(themes.values()), problems
