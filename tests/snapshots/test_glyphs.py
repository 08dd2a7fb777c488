"""Every glyph the UI draws is in DejaVu Sans Mono, the default monospace font of most
Linux terminals (a missing one shows as a box): the characters of the UI's string
literals and stylesheet, of every snapshot the suite keeps, and of the real app's
screens in every theme and view. The font's character map is the committed data file of
`tests.support.font_coverage`, checked against the font itself where it is installed."""

from __future__ import annotations

import ast
import html
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.support.font_coverage import (
    DATA,
    font_code_points,
    installed_font,
    known_code_points,
    parse,
    ranges,
    render,
)
from tests.support.legibility_scenes import each_view, tour_app
from tests.support.screen_colours import screen_cells

ROOT = Path(__file__).parents[2]
UI_SOURCES = sorted((ROOT / "cockpit").rglob("*.py"))
STYLESHEETS = sorted((ROOT / "themes").glob("*.tcss"))
SNAPSHOTS = sorted((Path(__file__).parent / "__snapshots__").rglob("*.svg"))
NOT_DRAWN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
"""Unicode categories of characters that are not glyphs (controls, zero-width and
direction marks: the sanitizer names some in order to remove them)."""


def drawn(text: str) -> set[str]:
    """The characters of `text` a terminal draws with a glyph of its font."""
    return {char for char in text if unicodedata.category(char) not in NOT_DRAWN}


def missing(chars: Iterable[str]) -> list[str]:
    """The characters the font lacks, named."""
    known = known_code_points()
    return sorted(
        f"U+{ord(c):04X} {c} {unicodedata.name(c, '?')}" for c in chars if ord(c) not in known
    )


def string_literals(path: Path) -> set[str]:
    """The characters of a module's string literals, docstrings aside (never drawn)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        char
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
        for char in drawn(node.value)
    }


def svg_text(path: Path) -> str:
    """The terminal's text in a snapshot: its `<text>` elements, entities decoded."""
    svg = path.read_text(encoding="utf-8")
    runs = re.findall(r"<text\b[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(re.sub(r"<[^>]+>", "", run) for run in runs))


# --- the data file -----------------------------------------------------------------------


def test_the_code_point_file_is_the_fonts_own_map() -> None:
    """Where the font is installed, the committed file lists exactly its code points (else
    the file is stale: `python -m tests.support.font_coverage` writes it again)."""
    font = installed_font()
    if font is None:
        pytest.skip("DejaVu Sans Mono is not installed here; the committed map is used")
    assert known_code_points() == font_code_points(font)


def test_the_code_point_file_reads_back_what_was_written() -> None:
    points = {0x20, 0x21, 0x22, 0x41, 0x2500, 0x2501, 0x1F600}
    text = render(points, "a font")
    assert parse(text) == points
    assert list(ranges(points)) == [(0x20, 0x22), (0x41, 0x41), (0x2500, 0x2501), (0x1F600,) * 2]
    assert parse(DATA.read_text(encoding="utf-8")) == known_code_points()


def test_the_map_is_a_real_fonts() -> None:
    """Sanity: printable ASCII and the box drawings are in it, an emoji is not, and it is
    about the size of DejaVu Sans Mono's (over 3,000 characters)."""
    known = known_code_points()
    assert set(range(0x20, 0x7F)) <= known
    assert set(range(0x2500, 0x2580)) <= known
    assert 0x1F50E not in known
    assert 0x24D8 not in known
    assert len(known) > 3000


# --- what the UI draws -----------------------------------------------------------------


def test_every_glyph_in_the_uis_strings_and_stylesheet_is_in_the_font() -> None:
    chars: set[str] = set()
    for path in UI_SOURCES:
        chars |= string_literals(path)
    for path in STYLESHEETS:
        chars |= drawn(re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S))
    assert len(chars) > 50  # the UI's marks and arrows are among them
    assert missing(chars) == []


def test_every_glyph_of_every_snapshot_is_in_the_font() -> None:
    assert len(SNAPSHOTS) > 20
    chars: set[str] = set()
    for path in SNAPSHOTS:
        text = svg_text(path)
        assert text.strip(), path.name
        chars |= drawn(text)
    assert missing(chars) == []


@pytest.mark.parametrize("size", [(80, 24), (140, 90)], ids=lambda size: "x".join(map(str, size)))
async def test_every_glyph_on_the_real_screens_is_in_the_font(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Textual's own widgets too: borders, scrollbars, the footer, the command palette."""
    folder = tmp_path / "project"
    folder.mkdir()
    app = await tour_app(tmp_path, folder)
    chars: set[str] = set()
    async with app.run_test(size=size) as pilot:
        async for _theme, _view in each_view(app, pilot, ("cockpit-dark", "cockpit-ansi")):
            chars |= drawn("".join(cell.char for cell in screen_cells(app)))
    assert {"▌", "✓", "✗", "⊙", "⚑", "─", "│"} <= chars  # focus bar, marks, borders
    assert missing(chars) == []


def test_a_missing_glyph_is_named() -> None:
    assert missing("aⓘ🔎") == [
        "U+1F50E 🔎 RIGHT-POINTING MAGNIFYING GLASS",
        "U+24D8 ⓘ CIRCLED LATIN SMALL LETTER I",
    ]
