"""Long lines of a unified diff wrap at word boundaries, keeping every character."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from cockpit.ui.diffs.wrapping import wrap_offsets


def pieces(text: str, width: int) -> list[str]:
    bounds = [0, *wrap_offsets(text, width), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def test_a_line_breaks_between_words() -> None:
    line = 'print("hello", name.upper() if loud else name, file=sys.stderr)'
    assert pieces(line, 30) == [
        'print("hello", name.upper() if ',
        "loud else name, ",
        "file=sys.stderr)",
    ]


def test_indentation_alone_is_not_a_line() -> None:
    assert pieces("        return value", 12) == ["        retu", "rn value"]


def test_a_word_longer_than_a_line_is_cut_at_the_column() -> None:
    assert pieces("y = '" + "a" * 20 + "'", 10) == ["y = 'aaaaa", "a" * 10, "aaaaa'"]


def test_a_line_that_fits_is_not_cut() -> None:
    assert wrap_offsets("short line", 10) == []
    assert wrap_offsets("", 5) == []


def test_wide_characters_count_as_two_cells() -> None:
    assert pieces("日本語 日本語", 6) == ["日本語 ", "日本語"]


@given(st.text(st.characters(codec="utf-8")), st.integers(1, 40))
def test_every_character_is_kept_and_each_line_fits(text: str, width: int) -> None:
    lines = pieces(text, width)
    assert "".join(lines) == text
    for line in lines:
        # Spaces at the end of a line may pass the width (they show nothing); a
        # character wider than the whole line still takes one.
        assert cell_len(line.rstrip()) <= width or len(line.rstrip()) == 1
