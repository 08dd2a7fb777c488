"""Themes: the bundled theme files, the TOML loader's checks and messages, user themes
over bundled ones, and that the loaded themes really work in a Textual app."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.color_triplet import ColorTriplet
from textual.app import App, ComposeResult
from textual.color import Color
from textual.theme import BUILTIN_THEMES, Theme
from textual.widgets import Button, Static

from cockpit.paths import bundled_dir
from cockpit.ui.app import CockpitApp
from cockpit.ui.themes import (
    ANSI_THEME,
    APP_VARIABLES,
    COLOUR_FIELDS,
    DEFAULT_THEME,
    FEW_COLOURS,
    LIGHT_THEME,
    ThemeError,
    fallback_variables,
    load_themes,
    startup_theme,
    theme_from_toml,
)
from tests.support.screen_colours import contrast as colour_contrast
from tests.support.ui_helpers import make_app

THEMES_DIR = bundled_dir("themes")
BUNDLED = ("cockpit-ansi", "cockpit-dark", "cockpit-light")
BUNDLED_FILES = sorted(THEMES_DIR.glob("*.toml"))


def theme_text(
    name: str,
    *,
    dark: bool = True,
    ansi: bool | None = None,
    primary: str = "#336699",
    variables: dict[str, str] | None = None,
    extra: str = "",
) -> str:
    """A theme file's text; JSON strings double as TOML basic strings."""
    lines = [f"name = {json.dumps(name)}", f"dark = {str(dark).lower()}"]
    if ansi is not None:
        lines.append(f"ansi = {str(ansi).lower()}")
    lines.append(f"primary = {json.dumps(primary)}")
    lines.append(extra)
    lines.append("[variables]")
    lines += [f"{key} = {json.dumps(value)}" for key, value in (variables or {}).items()]
    return "\n".join(lines) + "\n"


def full_variables(colour: str = "#123456") -> dict[str, str]:
    return dict.fromkeys(APP_VARIABLES, colour)


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def by_name(themes: Iterable[Theme]) -> dict[str, Theme]:
    return {theme.name: theme for theme in themes}


def bundled() -> dict[str, Theme]:
    themes, problems = load_themes(THEMES_DIR, None)
    assert problems == []
    return by_name(themes)


def contrast(first: str, second: str) -> float:
    """WCAG contrast of two colours as a theme writes them."""
    return colour_contrast(
        ColorTriplet(*Color.parse(first).rgb), ColorTriplet(*Color.parse(second).rgb)
    )


# --- the bundled themes ---------------------------------------------------------------


def test_the_three_bundled_themes_load_without_problems() -> None:
    themes, problems = load_themes(THEMES_DIR, None)
    assert problems == []
    assert sorted(theme.name for theme in themes) == list(BUNDLED)
    assert DEFAULT_THEME == "cockpit-dark"
    assert by_name(themes)[DEFAULT_THEME].dark


@pytest.mark.parametrize("path", BUNDLED_FILES, ids=lambda path: path.stem)
def test_a_bundled_theme_defines_every_app_variable_itself(path: Path) -> None:
    # Read strictly and without the user-theme filling: the file itself must have them all.
    theme = theme_from_toml(path.read_text(encoding="utf-8"), str(path))
    assert theme.name == path.stem
    assert [name for name in APP_VARIABLES if name not in theme.variables] == []
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(APP_VARIABLES) <= set(document["variables"])


def test_bundled_theme_files_are_exactly_the_three() -> None:
    assert [path.stem for path in BUNDLED_FILES] == list(BUNDLED)


def test_cockpit_ansi_uses_only_ansi_colour_names() -> None:
    theme = bundled()["cockpit-ansi"]
    assert theme.ansi is True
    colours = [getattr(theme, field) for field in COLOUR_FIELDS]
    assert None not in colours
    values = [*colours, *theme.variables.values()]
    assert [value for value in values if not str(value).startswith("ansi_")] == []
    assert all(Color.parse(value).ansi is not None for value in values)


def test_dark_and_light_are_what_they_say() -> None:
    themes = bundled()
    assert themes["cockpit-dark"].dark and not themes["cockpit-dark"].ansi
    assert not themes["cockpit-light"].dark and not themes["cockpit-light"].ansi
    dark_bg = Color.parse(themes["cockpit-dark"].background or "")
    light_bg = Color.parse(themes["cockpit-light"].background or "")
    assert dark_bg.brightness < 0.25 < 0.9 < light_bg.brightness


@pytest.mark.parametrize("name", BUNDLED)
def test_status_colours_are_distinct(name: str) -> None:
    variables = bundled()[name].variables
    statuses = {key: value for key, value in variables.items() if key.startswith("status-")}
    assert len(statuses) == 7
    clashes = [(a, b) for a, b in combinations(statuses, 2) if statuses[a] == statuses[b]]
    assert clashes == []


@pytest.mark.parametrize("name", ["cockpit-dark", "cockpit-light"])
def test_text_colours_are_readable_on_their_backgrounds(name: str) -> None:
    theme = bundled()[name]
    v = theme.variables
    assert theme.background and theme.foreground
    texts = [name for name in APP_VARIABLES if not name.endswith("-background")]
    weak = {
        text: round(contrast(v[text], theme.background), 2)
        for text in texts
        if contrast(v[text], theme.background) < 3.0
    }
    assert weak == {}
    # Body text inside bubbles and diff rows, and diff text on its own row.
    for background in ("bubble-user-background", "bubble-agent-background"):
        assert contrast(theme.foreground, v[background]) >= 7
    assert contrast(v["diff-added-foreground"], v["diff-added-background"]) >= 4.5
    assert contrast(v["diff-removed-foreground"], v["diff-removed-background"]) >= 4.5
    assert contrast(v["status-needs-you"], theme.background) >= 4.5


# --- user themes ----------------------------------------------------------------------


def test_a_user_theme_replaces_the_bundled_one_of_its_name(tmp_path: Path) -> None:
    text = theme_text("cockpit-dark", primary="#ff0000", variables=full_variables("#00ff00"))
    write(tmp_path, "cockpit-dark", text)
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    names = [theme.name for theme in themes]
    assert sorted(names) == list(BUNDLED)  # replaced, not duplicated
    theme = by_name(themes)["cockpit-dark"]
    assert theme.primary == "#ff0000"
    assert theme.variables["status-working"] == "#00ff00"


def test_a_user_theme_is_added_beside_the_bundled_ones(tmp_path: Path) -> None:
    write(tmp_path, "mine", theme_text("mine", variables=full_variables()))
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    assert sorted(theme.name for theme in themes) == sorted([*BUNDLED, "mine"])


@pytest.mark.parametrize(
    ("dark", "ansi", "source"),
    [(True, None, "cockpit-dark"), (False, None, "cockpit-light"), (True, True, "cockpit-ansi")],
)
def test_a_user_theme_missing_app_variables_gets_them_from_its_kind(
    tmp_path: Path, dark: bool, ansi: bool | None, source: str
) -> None:
    write(
        tmp_path,
        "partial",
        theme_text("partial", dark=dark, ansi=ansi, variables={"status-working": "#abcdef"}),
    )
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    theme = by_name(themes)["partial"]
    reference = bundled()[source].variables
    assert theme.variables["status-working"] == "#abcdef"  # its own value is kept
    for name in APP_VARIABLES:
        if name != "status-working":
            assert theme.variables[name] == reference[name], name


def test_a_user_theme_replacing_cockpit_dark_partially_is_filled_from_the_bundled_one(
    tmp_path: Path,
) -> None:
    write(tmp_path, "cockpit-dark", theme_text("cockpit-dark", primary="#ff0000"))
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    theme = by_name(themes)["cockpit-dark"]
    assert theme.primary == "#ff0000"
    assert theme.variables == {
        name: bundled()["cockpit-dark"].variables[name] for name in APP_VARIABLES
    }


def test_a_missing_user_folder_is_no_problem(tmp_path: Path) -> None:
    themes, problems = load_themes(THEMES_DIR, tmp_path / "absent")
    assert problems == []
    assert len(themes) == 3


def test_a_bad_file_is_reported_and_the_others_still_load(tmp_path: Path) -> None:
    user = tmp_path / "user"
    write(user, "alpha", theme_text("alpha", variables=full_variables()))
    broken = write(user, "broken", "name = 'broken'\ndark = tru\n")
    write(user, "zulu", theme_text("zulu", variables=full_variables()))
    (user / "not-utf8.toml").write_bytes(b"name = '\xff'\n")
    themes, problems = load_themes(THEMES_DIR, user)
    assert sorted(theme.name for theme in themes) == sorted([*BUNDLED, "alpha", "zulu"])
    assert len(problems) == 2
    assert problems[0].startswith(f"{broken}:2: not valid TOML")
    assert str(user / "not-utf8.toml") in problems[1]


def test_a_bad_bundled_file_is_skipped_too(tmp_path: Path) -> None:
    folder = tmp_path / "bundled"
    for path in BUNDLED_FILES:
        write(folder, path.stem, path.read_text(encoding="utf-8"))
    write(folder, "half", theme_text("half", variables={"status-idle": "#808080"}))
    themes, problems = load_themes(folder, None)
    assert sorted(theme.name for theme in themes) == list(BUNDLED)
    assert len(problems) == 1
    assert "half.toml" in problems[0]
    assert "bubble-user-background" in problems[0]  # bundled themes get no filling


def test_the_name_must_match_the_file_name(tmp_path: Path) -> None:
    path = write(tmp_path, "mine", theme_text("yours", variables=full_variables()))
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert "yours" not in by_name(themes)
    assert problems == [f"{path}:1: name 'yours' must match the file name 'mine'"]


# --- messages -------------------------------------------------------------------------


def test_a_toml_syntax_error_names_the_file_and_line() -> None:
    text = 'name = "x"\ndark = true\nprimary = "#fff"\n[variables\n'
    with pytest.raises(ThemeError) as caught:
        theme_from_toml(text, "/home/u/themes/x.toml")
    message = str(caught.value)
    assert message.startswith("/home/u/themes/x.toml:4: not valid TOML")
    assert "line 4" in message


def test_a_syntax_error_at_the_end_of_the_document_points_at_the_last_line() -> None:
    with pytest.raises(ThemeError, match=r"^f\.toml:2: not valid TOML"):
        theme_from_toml('name = "x"\nprimary = \n', "f.toml")


@pytest.mark.parametrize(
    ("extra", "field", "value", "line"),
    [
        ('secondary = "#12345g"', "secondary", "#12345g", 4),
        ('background = "ansi_grey"', "background", "ansi_grey", 4),
    ],
)
def test_a_bad_colour_names_the_field_and_value(
    extra: str, field: str, value: str, line: int
) -> None:
    with pytest.raises(ThemeError) as caught:
        theme_from_toml(theme_text("x", extra=extra, variables=full_variables()), "x.toml")
    message = str(caught.value)
    assert message.startswith(f"x.toml:{line}: {field} = {value!r} is not a colour")


def test_a_bad_colour_suggests_the_near_name() -> None:
    extra = 'background = "ansi_grey"'
    with pytest.raises(ThemeError, match="did you mean 'ansi_green'"):
        theme_from_toml(theme_text("x", extra=extra, variables=full_variables()), "x.toml")


def test_a_bad_primary_is_reported() -> None:
    with pytest.raises(ThemeError, match=r"^x\.toml:3: primary = 'blurple' is not a colour"):
        theme_from_toml(theme_text("x", primary="blurple", variables=full_variables()), "x.toml")


def test_a_bad_variable_colour_names_the_variable_and_value() -> None:
    variables = {**full_variables(), "status-error": "#red"}
    text = theme_text("x", variables=variables)
    line = text.splitlines().index('status-error = "#red"') + 1
    with pytest.raises(ThemeError) as caught:
        theme_from_toml(text, "x.toml")
    assert str(caught.value).startswith(
        f"x.toml:{line}: variables.status-error = '#red' is not a colour"
    )


def test_a_colour_must_be_a_string() -> None:
    with pytest.raises(ThemeError, match="accent must be a colour string, not 12"):
        theme_from_toml(theme_text("x", extra="accent = 12", variables=full_variables()), "x")


def test_an_unknown_key_is_reported() -> None:
    extra = 'primery = "#fff"'
    with pytest.raises(ThemeError) as caught:
        theme_from_toml(theme_text("x", extra=extra, variables=full_variables()), "x.toml")
    assert str(caught.value).startswith("x.toml:4: unknown key 'primery'")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('dark = true\nprimary = "#fff"\n', "x.toml: name is missing"),
        ('name = "x"\nprimary = "#fff"\n', "x.toml: dark is missing"),
        ('name = "x"\ndark = true\n', "x.toml: primary is missing"),
        ('name = "x"\ndark = "yes"\nprimary = "#fff"\n', "x.toml:2: dark must be true or false"),
        ('name = "a b"\ndark = true\nprimary = "#fff"\n', "x.toml:1: name 'a b' must be"),
        ('name = "x"\ndark = true\nprimary = "#fff"\nvariables = 3\n', "x.toml:4: variables must"),
    ],
)
def test_missing_or_mistyped_fields_are_named(text: str, expected: str) -> None:
    with pytest.raises(ThemeError) as caught:
        theme_from_toml(text, "x.toml", require_variables=False)
    assert str(caught.value).startswith(expected)


def test_a_missing_app_variable_is_named() -> None:
    variables = full_variables()
    del variables["diff-added-foreground"]
    with pytest.raises(
        ThemeError, match=r"^x\.toml: \[variables\] is missing diff-added-foreground$"
    ):
        theme_from_toml(theme_text("x", variables=variables), "x.toml")
    assert theme_from_toml(theme_text("x", variables=variables), "x", require_variables=False)


def test_variables_accept_opacity_and_text_styles_but_not_nonsense() -> None:
    good = {
        **full_variables(),
        "bubble-user-background": "#336699 40%",
        "footer-key-foreground": "ansi_bright_blue",
        "block-cursor-text-style": "bold reverse",
        "text": "auto 87%",
    }
    theme = theme_from_toml(theme_text("x", variables=good), "x")
    assert theme.variables["bubble-user-background"] == "#336699 40%"
    for name, value in [
        ("block-cursor-text-style", "sparkly"),
        ("border", "#fff #000"),
        ("border", "#fff 40"),
    ]:
        with pytest.raises(ThemeError, match=f"variables.{name}"):
            theme_from_toml(theme_text("x", variables={name: value}), "x", require_variables=False)


@pytest.mark.parametrize("builtin", sorted(BUILTIN_THEMES), ids=str)
def test_every_value_textual_itself_uses_is_accepted(builtin: str) -> None:
    """A user may set any of Textual's own variables in `[variables]`, to any value Textual
    generates for its built-in themes: the checks must not reject real CSS values."""
    source = BUILTIN_THEMES[builtin]
    generated = {**source.to_color_system().generate(), **source.variables}
    colours = "\n".join(
        f"{field} = {json.dumps(getattr(source, field))}"
        for field in COLOUR_FIELDS
        if field != "primary" and getattr(source, field) is not None
    )
    text = theme_text(
        builtin,
        dark=source.dark,
        ansi=source.ansi,
        primary=source.primary,
        variables={**generated, **full_variables()},
        extra=colours,
    )
    theme = theme_from_toml(text, builtin)
    assert theme.variables["scrollbar"] == generated["scrollbar"]


def outcome(text: str) -> Theme | str:
    """The theme, or the ThemeError's message: anything else escaping is a bug."""
    try:
        return theme_from_toml(text, "x.toml")
    except ThemeError as error:
        return str(error)


@given(st.text())
def test_any_primary_value_is_a_theme_or_a_theme_error(value: str) -> None:
    result = outcome(theme_text("x", primary=value, variables=full_variables()))
    if isinstance(result, str):
        assert result.startswith("x.toml")
    else:
        assert Color.parse(result.primary)


@given(st.text(max_size=300))
def test_any_text_is_a_theme_or_a_theme_error(text: str) -> None:
    result = outcome(text)
    assert isinstance(result, Theme) or result.startswith("x.toml")


def test_an_ansi_theme_gets_the_variables_textual_needs_in_ansi_mode() -> None:
    dark = theme_from_toml(
        theme_text("a", ansi=True, primary="ansi_blue"), "a", require_variables=False
    )
    light = theme_from_toml(
        theme_text("b", dark=False, ansi=True, primary="ansi_blue"), "b", require_variables=False
    )
    assert dark.variables["ansi-background"] == "ansi_black"
    assert light.variables["ansi-background"] == "ansi_white"
    plain = theme_from_toml(theme_text("c"), "c", require_variables=False)
    assert "ansi-background" not in plain.variables


def test_fallback_variables_pick_the_closest_bundled_theme() -> None:
    themes = list(bundled().values())

    def app_variables(name: str) -> dict[str, str]:
        return {key: bundled()[name].variables[key] for key in APP_VARIABLES}

    dark = app_variables("cockpit-dark")
    assert fallback_variables(BUILTIN_THEMES["nord"], themes) == dark
    light = fallback_variables(BUILTIN_THEMES["textual-light"], themes)
    assert light == app_variables("cockpit-light")
    assert fallback_variables(BUILTIN_THEMES["ansi-light"], themes)["status-working"].startswith(
        "ansi_"
    )
    only_light = [bundled()["cockpit-light"]]
    assert fallback_variables(BUILTIN_THEMES["nord"], only_light) == light
    assert fallback_variables(BUILTIN_THEMES["nord"], []) == {}


# --- in a real Textual app ------------------------------------------------------------


def _property(variable: str) -> str:
    if variable.endswith("-background"):
        return "background"
    if variable.endswith("-border"):
        return "border"
    return "color"


class ThemedApp(App[None]):
    """Uses every app variable the way Cockpit's stylesheet does, plus a Button (which
    needs `$ansi-background` in ANSI mode)."""

    CSS = "\n".join(
        f"#v{index} {{ {_property(name)}: {'round ' if _property(name) == 'border' else ''}${name}; }}"
        for index, name in enumerate(APP_VARIABLES)
    )

    def __init__(self, themes: list[Theme]) -> None:
        # Before super().__init__(): App.__init__ already builds the stylesheet's variables.
        self.cockpit_themes = themes
        super().__init__()
        for theme in themes:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return fallback_variables(self.current_theme, self.cockpit_themes)

    def compose(self) -> ComposeResult:
        for index, _name in enumerate(APP_VARIABLES):
            yield Static(str(index), id=f"v{index}")
        yield Button("ok")


def _styled_colour(app: ThemedApp, index: int, variable: str) -> Color:
    styles = app.query_one(f"#v{index}").styles
    prop = _property(variable)
    if prop == "background":
        return styles.background
    if prop == "border":
        return styles.border_top[1]
    return styles.color


async def test_loaded_themes_register_and_apply_in_a_textual_app(tmp_path: Path) -> None:
    write(
        tmp_path, "partial", theme_text("partial", dark=False, variables={"status-idle": "#777777"})
    )
    write(tmp_path, "bare-ansi", theme_text("bare-ansi", ansi=True, primary="ansi_magenta"))
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    app = ThemedApp(themes)
    async with app.run_test() as pilot:
        for theme in themes:
            app.theme = theme.name
            await pilot.pause()
            assert app.current_theme is theme
            variables = app.theme_variables
            for index, name in enumerate(APP_VARIABLES):
                assert variables[name] == theme.variables[name], (theme.name, name)
                assert _styled_colour(app, index, name) == Color.parse(theme.variables[name])
            assert app.native_ansi_color == theme.ansi


@pytest.mark.parametrize("builtin", ["nord", "textual-light", "ansi-dark"])
async def test_textual_builtin_themes_work_with_the_fallback_variables(builtin: str) -> None:
    themes = list(bundled().values())
    app = ThemedApp(themes)
    async with app.run_test() as pilot:
        app.theme = builtin
        await pilot.pause()
        expected = fallback_variables(BUILTIN_THEMES[builtin], themes)
        assert {name: app.theme_variables[name] for name in APP_VARIABLES} == expected


def test_the_readme_example_is_a_working_user_theme(tmp_path: Path) -> None:
    readme = (THEMES_DIR / "README.md").read_text(encoding="utf-8")
    example = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    write(tmp_path, "harbour", example)
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    harbour = by_name(themes)["harbour"]
    assert set(APP_VARIABLES) <= set(harbour.variables)
    assert harbour.variables["status-needs-you"] == "#FF9F1C"


async def test_every_variable_textual_defines_for_a_colour_theme_exists_in_every_theme(
    tmp_path: Path,
) -> None:
    """A stylesheet written against a non-ANSI theme keeps parsing under cockpit-ansi."""
    write(tmp_path, "bare-ansi", theme_text("bare-ansi", dark=False, ansi=True, primary="ansi_red"))
    themes, problems = load_themes(THEMES_DIR, tmp_path)
    assert problems == []
    textual_names = set(BUILTIN_THEMES["textual-dark"].to_color_system().generate())
    app = ThemedApp(themes)
    async with app.run_test() as pilot:
        for theme in themes:
            app.theme = theme.name
            await pilot.pause()
            assert sorted(textual_names - set(app.theme_variables)) == [], theme.name


# --- the theme Cockpit starts in --------------------------------------------------------

COLOUR_SYSTEMS = ["truecolor", "256", "standard", "windows", None]


@pytest.mark.parametrize("colours", COLOUR_SYSTEMS)
def test_a_saved_theme_is_kept_at_any_colour_depth(colours: str | None) -> None:
    for saved in (DEFAULT_THEME, LIGHT_THEME, ANSI_THEME, "nord"):
        assert startup_theme(saved, colours, [*BUNDLED, "nord"]) == saved


@pytest.mark.parametrize(
    ("colours", "expected"),
    [
        ("truecolor", DEFAULT_THEME),
        ("256", DEFAULT_THEME),
        ("standard", ANSI_THEME),
        ("windows", ANSI_THEME),
        (None, ANSI_THEME),
    ],
)
def test_without_a_saved_theme_16_colours_or_fewer_start_in_the_ansi_theme(
    colours: str | None, expected: str
) -> None:
    for saved in (None, "", "a-theme-since-deleted", 3):
        assert startup_theme(saved, colours, BUNDLED) == expected


def test_without_the_ansi_theme_the_default_is_used() -> None:
    assert startup_theme(None, "standard", [DEFAULT_THEME, LIGHT_THEME]) == DEFAULT_THEME


@given(
    st.one_of(st.none(), st.integers(), st.text(max_size=12), st.sampled_from(BUNDLED)),
    st.sampled_from(COLOUR_SYSTEMS),
    st.sets(st.sampled_from([*BUNDLED, "nord", "mine"]), min_size=1),
)
def test_the_startup_theme_is_always_an_available_one_and_the_saved_one_if_it_can(
    saved: object, colours: str | None, names: set[str]
) -> None:
    names |= {DEFAULT_THEME}
    chosen = startup_theme(saved, colours, names)
    assert chosen in names
    if isinstance(saved, str) and saved in names:
        assert chosen == saved
    elif colours in FEW_COLOURS and ANSI_THEME in names:
        assert chosen == ANSI_THEME
    else:
        assert chosen == DEFAULT_THEME


@pytest.mark.parametrize(
    ("term", "colorterm", "expected"),
    [
        ("xterm-256color", None, DEFAULT_THEME),
        ("xterm-256color", "truecolor", DEFAULT_THEME),
        ("xterm", None, ANSI_THEME),
        ("linux", None, ANSI_THEME),
        ("xterm", "truecolor", DEFAULT_THEME),
    ],
)
def test_the_app_starts_in_the_theme_its_terminal_can_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, term: str, colorterm: str | None, expected: str
) -> None:
    monkeypatch.setenv("TERM", term)
    if colorterm is None:
        monkeypatch.delenv("COLORTERM", raising=False)
    else:
        monkeypatch.setenv("COLORTERM", colorterm)
    assert make_app(tmp_path).theme == expected


def test_the_app_keeps_a_saved_theme_on_a_16_colour_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("COLORTERM", raising=False)
    settings = tmp_path / "home" / "config" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"theme": LIGHT_THEME}))
    assert make_app(tmp_path).theme == LIGHT_THEME


async def test_choosing_the_default_theme_on_a_16_colour_terminal_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app starts in cockpit-ansi there; the user's choice of cockpit-dark must be
    saved, or the next start would be in cockpit-ansi again."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("COLORTERM", raising=False)
    app: CockpitApp = make_app(tmp_path)
    assert app.theme == ANSI_THEME
    async with app.run_test() as pilot:
        app.theme = DEFAULT_THEME
        await pilot.pause()
    saved = json.loads(app.settings_file.read_text(encoding="utf-8"))
    assert saved["theme"] == DEFAULT_THEME
    assert make_app(tmp_path).theme == DEFAULT_THEME
