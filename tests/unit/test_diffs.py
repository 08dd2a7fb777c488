"""The diff renderer of file edits: the model (hunks, numbers, pairing, folding) against
hand-worked examples and properties, and the Rich renderings as a terminal shows them."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.color import Color as RichColor
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

from cockpit.text.sanitize import printable
from cockpit.ui.diffs.highlight import highlight
from cockpit.ui.diffs.model import (
    DiffLine,
    Row,
    count_changes,
    diff_lines,
    diff_stats,
    fold,
    fold_rows,
    side_by_side,
    split_lines,
    unified_rows,
)
from cockpit.ui.diffs.palette import CODE_THEME, DiffStyles
from cockpit.ui.diffs.render import (
    Layout,
    choose_layout,
    render_diff,
    render_side_by_side,
    render_unified,
)

STYLES = DiffStyles()
ANSI_STYLES = DiffStyles(
    added_background="ansi_default",
    removed_background="ansi_default",
    added_foreground="ansi_green",
    removed_foreground="ansi_red",
    gutter="ansi_bright_black",
    syntax_theme="ansi_dark",
)

OLD_PY = '''import os

def greet(name):
    """Say hello."""
    print("hello", name)
    return 1

class A:
\tpass
'''
NEW_PY = '''import os
import sys

def greet(name, loud=False):
    """Say hello
    loudly if asked."""
    print("hello", name.upper() if loud else name, file=sys.stderr)
    return 1

class A:
\tpass
'''


def ctx(old: int, new: int, text: str) -> DiffLine:
    return DiffLine("context", old, new, text)


def rem(old: int, text: str) -> DiffLine:
    return DiffLine("removed", old, None, text)


def add(new: int, text: str) -> DiffLine:
    return DiffLine("added", None, new, text)


def hunk(text: str) -> DiffLine:
    return DiffLine("hunk", None, None, text)


def numbered(count: int, changed: Sequence[int] = ()) -> tuple[str, str]:
    """A file of `count` numbered lines and a copy with lines `changed` (1-based) edited."""
    old = [f"line {n}" for n in range(1, count + 1)]
    new = [f"LINE {n}" if n in changed else text for n, text in enumerate(old, 1)]
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


# --- the model -------------------------------------------------------------------------


def test_a_one_line_change() -> None:
    assert diff_lines("a\nb\nc\n", "a\nB\nc\n") == [
        hunk("@@ -1,3 +1,3 @@"),
        ctx(1, 1, "a"),
        rem(2, "b"),
        add(2, "B"),
        ctx(3, 3, "c"),
    ]
    assert diff_stats("a\nb\nc\n", "a\nB\nc\n") == (1, 1)


def test_an_insertion_shifts_the_new_numbers() -> None:
    assert diff_lines("a\nc\nd\n", "a\nb\nc\nd\n") == [
        hunk("@@ -1,3 +1,4 @@"),
        ctx(1, 1, "a"),
        add(2, "b"),
        ctx(2, 3, "c"),
        ctx(3, 4, "d"),
    ]
    assert diff_stats("a\nc\nd\n", "a\nb\nc\nd\n") == (1, 0)


def test_a_deletion() -> None:
    assert diff_lines("a\nb\nc\n", "a\nc\n") == [
        hunk("@@ -1,3 +1,2 @@"),
        ctx(1, 1, "a"),
        rem(2, "b"),
        ctx(3, 2, "c"),
    ]
    assert diff_stats("a\nb\nc\n", "a\nc\n") == (0, 1)


def test_hunk_ranges_as_unified_diff_writes_them() -> None:
    """A one-line side leaves its count out; an empty side names the line before it."""
    assert diff_lines("a\n", "b\n")[0] == hunk("@@ -1 +1 @@")
    assert diff_lines("", "x\ny\n")[0] == hunk("@@ -0,0 +1,2 @@")
    assert diff_lines("x\ny\n", "")[0] == hunk("@@ -1,2 +0,0 @@")


def test_a_new_file_is_all_added_lines_without_a_hunk_header() -> None:
    assert diff_lines(None, "one\ntwo\nthree") == [add(1, "one"), add(2, "two"), add(3, "three")]
    assert diff_stats(None, "one\ntwo\nthree\n") == (3, 0)
    assert diff_lines(None, "") == []


def test_identical_texts_have_no_hunks() -> None:
    text = "a\nb\nc\n"
    assert diff_lines(text, text) == []
    assert diff_stats(text, text) == (0, 0)
    assert diff_lines("", "") == []
    # A CRLF file re-written with LF, or a lost final newline, shows no line as changed.
    assert diff_lines("a\r\nb\r\n", "a\nb\n") == []
    assert diff_lines("a\nb", "a\nb\n") == []


def test_context_size_is_respected() -> None:
    old, new = numbered(20, changed=[10])
    lines = diff_lines(old, new, context=2)
    assert lines[0] == hunk("@@ -8,5 +8,5 @@")
    assert [line.old_number for line in lines if line.kind == "context"] == [8, 9, 11, 12]
    assert [line.kind for line in diff_lines(old, new, context=0)] == ["hunk", "removed", "added"]
    default = diff_lines(old, new)
    assert [line.old_number for line in default if line.kind == "context"] == [7, 8, 9, 11, 12, 13]


def test_changes_far_apart_make_separate_hunks_and_near_ones_share_one() -> None:
    old, new = numbered(30, changed=[5, 25])
    assert [line.text for line in diff_lines(old, new, context=3) if line.kind == "hunk"] == [
        "@@ -2,7 +2,7 @@",
        "@@ -22,7 +22,7 @@",
    ]
    old, new = numbered(30, changed=[5, 11])  # 5 unchanged lines between: within 2 x 3
    assert [line.kind for line in diff_lines(old, new, context=3)].count("hunk") == 1


def test_line_numbers_on_both_sides() -> None:
    old = "".join(f"{n}\n" for n in range(1, 11))
    new = old.replace("3\n", "3\nthree-a\nthree-b\n").replace("8\n", "")
    lines = diff_lines(old, new, context=1)
    for line in lines:
        if line.kind == "context":
            assert line.old_number is not None
            assert line.new_number is not None
            shift = 0 if line.old_number <= 3 else 2 if line.old_number < 8 else 1
            assert line.new_number == line.old_number + shift
            assert line.text == str(line.old_number)
    assert add(4, "three-a") in lines
    assert add(5, "three-b") in lines
    assert rem(8, "8") in lines


def test_negative_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="context"):
        diff_lines("a", "b", context=-1)
    with pytest.raises(ValueError, match="limit"):
        fold([], -1)


def test_tabs_are_expanded_to_four_columns() -> None:
    assert split_lines("\tx\nab\ty\n") == ["    x", "ab  y"]
    assert diff_lines(None, "\tpass")[0].text == "    pass"


def test_escape_sequences_and_controls_are_removed() -> None:
    old = "safe\n\x1b]0;pwned\x07title\n"
    new = "safe\n\x1b[31mred\x1b[0m\x07 \x1b]52;c;aGk=\x1b\\bell\x9b2J\n"
    lines = diff_lines(old, new)
    texts = [line.text for line in lines]
    assert texts == ["@@ -1,2 +1,2 @@", "safe", "title", "red bell"]
    for text in texts:
        assert printable(text) == text
        assert "\x1b" not in text
    output = plain(
        render_unified("evil\x1b[2J.py\n", old, new, width=60, folded=False, styles=STYLES)
    )
    assert "\x1b" not in output
    assert output.splitlines()[0].startswith("evil.py  +1 -1")


def test_folding_keeps_the_first_lines_and_counts_the_rest() -> None:
    old, new = numbered(100, changed=range(1, 101, 2))  # 50 changed lines, 50 unchanged
    lines = diff_lines(old, new)
    assert len(lines) == 151  # one hunk: header, 50 removed, 50 added, 50 context
    folded = fold(lines, 40)
    assert len(folded) == 41
    assert folded[:40] == lines[:40]
    hidden = lines[40:]
    added, removed = count_changes(hidden)
    assert folded[-1] == DiffLine(
        "fold", None, None, f"… {len(hidden)} more lines (+{added} -{removed})"
    )
    # Everything is accounted for: kept plus hidden is the whole diff.
    kept_added, kept_removed = count_changes(folded[:40])
    assert (kept_added + added, kept_removed + removed) == diff_stats(old, new) == (50, 50)


def test_folding_leaves_short_diffs_alone() -> None:
    lines = diff_lines(*numbered(5, changed=[3]))
    assert fold(lines, len(lines)) == lines
    # Hiding one line behind a fold line would save nothing.
    assert fold(lines, len(lines) - 1) == lines
    # One row short: the unchanged lines after the change are summarised, not the change.
    assert [line.text for line in fold(lines, len(lines) - 2)] == [
        "@@ -1,5 +1,5 @@",
        "line 1",
        "line 2",
        "line 3",
        "LINE 3",
        "… 2 unchanged lines",
    ]
    assert [line.text for line in fold(lines, 4)] == [
        "@@ -1,5 +1,5 @@",
        "… 2 unchanged lines",
        "line 3",
        "LINE 3",
        "… 2 unchanged lines",
    ]


def test_folding_does_not_leave_a_hunk_header_dangling() -> None:
    old, new = numbered(40, changed=[2, 30])
    lines = diff_lines(old, new)
    # Summarised, the diff is: header, line 1, -line 2, +LINE 2, a summary, the second
    # header, ... Cut after six rows it would end on the second header (and a summary).
    assert [line.text for line in fold(lines, 6)] == [
        "@@ -1,5 +1,5 @@",
        "line 1",
        "line 2",
        "LINE 2",
        "… 11 more lines (+1 -1)",
    ]


def test_a_rewritten_file_shows_what_it_will_hold() -> None:
    """The permission prompt's case: a 62-line file replaced by 6 new lines. Folded to 8
    lines, the unified view summarises the removed lines and shows every added one; the
    split view pairs first, so the new lines stand beside the first old ones."""
    old = "".join(f"line {n} of my own notes\n" for n in range(1, 63))
    new = "# Notes\n\nWritten by the agent.\n\n- one\n- two\n"
    lines = diff_lines(old, new)
    assert [line.text for line in fold(lines, 8)] == [
        "@@ -1,62 +1,6 @@",
        "line 1 of my own notes",
        "… 61 lines removed",
        "# Notes",
        "",
        "Written by the agent.",
        "",
        "- one",
        "- two",
    ]
    rows = fold_rows(side_by_side(lines), 8)
    assert len(rows) == 9
    assert [right.text for _, right in rows[1:7] if right is not None] == new.splitlines()
    assert [left.text for left, _ in rows[1:8] if left is not None] == [
        f"line {n} of my own notes" for n in range(1, 8)
    ]
    assert rows[-1][0] == rows[-1][1] == DiffLine("fold", None, None, "… 55 lines removed")


def test_context_next_to_a_change_is_kept_before_context_far_from_it() -> None:
    old, new = numbered(30, changed=[10, 11, 12, 13, 14, 15, 16])
    lines = diff_lines(old, new)  # header, 3 context, 7 removed, 7 added, 3 context
    assert [line.text for line in fold(lines, 13)] == [
        "@@ -7,13 +7,13 @@",
        "… 2 unchanged lines",
        "line 9",  # just before the change; lines 7 and 8 are farther from it
        "line 10",
        "… 6 lines removed",
        *(f"LINE {n}" for n in range(10, 17)),
        "line 17",  # just after it
        "… 2 unchanged lines",
    ]


def test_side_by_side_pairs_a_replaced_block_of_unequal_sizes() -> None:
    old = "keep\nr1\nr2\nr3\nend\n"
    new = "keep\na1\nend\nmore\nand more\n"
    rows = side_by_side(diff_lines(old, new))
    keep, end = ctx(1, 1, "keep"), ctx(5, 3, "end")
    assert rows == [
        (hunk("@@ -1,5 +1,5 @@"), hunk("@@ -1,5 +1,5 @@")),
        (keep, keep),
        (rem(2, "r1"), add(2, "a1")),
        (rem(3, "r2"), None),
        (rem(4, "r3"), None),
        (end, end),
        (None, add(4, "more")),
        (None, add(5, "and more")),
    ]
    rows = side_by_side(diff_lines("x\n", "a\nb\nc\n"))
    assert rows[1:] == [(rem(1, "x"), add(1, "a")), (None, add(2, "b")), (None, add(3, "c"))]


def test_side_by_side_of_a_pure_deletion_leaves_the_right_empty() -> None:
    rows = side_by_side(diff_lines("a\nb\nc\n", "a\nc\n"))
    assert (rem(2, "b"), None) in rows


def test_choose_layout() -> None:
    assert choose_layout(119) == "unified"
    assert choose_layout(120) == "split"
    assert choose_layout(200) == "split"


def test_styles_from_theme_variables() -> None:
    variables = {
        "background": "#1B2130",
        "diff-added-background": "ansi_default",
        "diff-removed-background": "#40252C",
        "diff-added-foreground": "ansi_green",
        "foreground-muted": "#888888",
    }
    styles = DiffStyles.from_variables(variables)
    assert styles.added_background == "ansi_default"
    assert styles.removed_background == "#40252C"
    assert styles.added_foreground == "ansi_green"
    assert styles.removed_foreground == DiffStyles().removed_foreground
    assert styles.gutter == "#888888"
    assert styles.syntax_theme == CODE_THEME
    assert DiffStyles.from_variables(variables, syntax_theme="dracula").syntax_theme == "dracula"


def test_styles_suit_dark_light_and_ansi_themes() -> None:
    """Textual writes `foreground-muted` with an alpha (made opaque over the background
    here), or as `ansi_default 50%` in ANSI themes, which is not a colour Rich can show."""
    dark = DiffStyles.from_variables({"background": "#000000", "foreground-muted": "#FFFFFF80"})
    assert dark.gutter == "#808080"
    assert dark.syntax_theme == CODE_THEME
    light = DiffStyles.from_variables({"background": "#FBFAF7", "foreground-muted": "#24292F99"})
    assert light.syntax_theme == CODE_THEME  # drawn in the theme's ANSI palette
    ansi = DiffStyles.from_variables(
        {"background": "ansi_default", "foreground-muted": "ansi_default 50%"}
    )
    assert ansi.gutter == "ansi_bright_black"
    assert ansi.syntax_theme == CODE_THEME


# --- properties ------------------------------------------------------------------------

# Few distinct lines, so the texts share many lines and the diffs have every kind of run;
# tabs, escapes, CRLF and lines that are empty once cleaned are among them.
LINE = st.sampled_from(["a", "b", "c", "", "  d", "\tx", "é 日本", "\x1b[1mz", "\x07", "q\r"])
TEXT = st.builds(
    lambda lines, end: "\n".join(lines) + end,
    st.lists(LINE, max_size=25),
    st.sampled_from(["", "\n"]),
)
ANY_TEXT = st.one_of(TEXT, st.text(max_size=80))


def expected_lines(text: str) -> list[str]:
    """The lines a reader sees, worked out independently of the module."""
    lines = printable(text).expandtabs(4).split("\n")
    return lines[:-1] if lines[-1] == "" else lines


@given(old=ANY_TEXT, new=ANY_TEXT)
def test_with_unlimited_context_the_diff_rebuilds_both_texts(old: str, new: str) -> None:
    lines = diff_lines(old, new, context=10**6)
    if not lines:  # nothing changed: no hunk at all
        assert expected_lines(old) == expected_lines(new)
        return
    assert [ln.text for ln in lines if ln.kind in ("context", "added")] == expected_lines(new)
    assert [ln.text for ln in lines if ln.kind in ("context", "removed")] == expected_lines(old)


@given(old=ANY_TEXT, new=ANY_TEXT, context=st.integers(0, 4))
def test_every_line_carries_its_own_numbers(old: str, new: str, context: int) -> None:
    old_lines, new_lines = expected_lines(old), expected_lines(new)
    lines = diff_lines(old, new, context=context)
    last_old = last_new = 0
    for line in lines:
        if line.kind == "hunk":
            assert line.old_number is None
            assert line.new_number is None
            continue
        if line.kind in ("context", "removed"):
            assert line.old_number is not None
            assert old_lines[line.old_number - 1] == line.text
            assert line.old_number > last_old
            last_old = line.old_number
        else:
            assert line.old_number is None
        if line.kind in ("context", "added"):
            assert line.new_number is not None
            assert new_lines[line.new_number - 1] == line.text
            assert line.new_number > last_new
            last_new = line.new_number
        else:
            assert line.new_number is None
    added, removed = diff_stats(old, new)
    assert added - removed == len(new_lines) - len(old_lines)
    assert (added, removed) == count_changes(lines)


@given(old=ANY_TEXT, new=ANY_TEXT)
def test_a_new_file_rebuilds_its_text(old: str, new: str) -> None:
    lines = diff_lines(None, new)
    assert [line.text for line in lines] == expected_lines(new)
    assert {line.kind for line in lines} <= {"added"}
    assert [line.new_number for line in lines] == list(range(1, len(lines) + 1))


@given(old=ANY_TEXT, new=ANY_TEXT, context=st.integers(0, 3))
def test_side_by_side_keeps_every_line_once_on_its_side(old: str, new: str, context: int) -> None:
    lines = diff_lines(old, new, context=context)
    rows = side_by_side(lines)
    left = [row[0] for row in rows if row[0] is not None]
    right = [row[1] for row in rows if row[1] is not None]
    assert left == [line for line in lines if line.kind != "added"]
    assert right == [line for line in lines if line.kind != "removed"]
    for left_line, right_line in rows:
        assert left_line is not None or right_line is not None
        if left_line is not None and left_line.kind not in ("removed",):
            assert right_line is left_line  # context and hunk lines stand on both sides


def rows_of(lines: list[DiffLine], layout: Layout) -> list[Row]:
    return side_by_side(lines) if layout == "split" else unified_rows(lines)


def file_lines(rows: Sequence[Row]) -> list[DiffLine]:
    """The file lines of `rows` (context lines once though they stand on both sides)."""
    found: list[DiffLine] = []
    for left, right in rows:
        for line in {id(x): x for x in (left, right) if x is not None}.values():
            if line.kind in ("context", "removed", "added"):
                found.append(line)
    return found


SUMMARY = re.compile(r"… (\d+) (?:lines? removed|unchanged lines?)")
FOLD = re.compile(r"… (\d+) more lines? \(\+(\d+) -(\d+)\)")


@given(
    old=ANY_TEXT,
    new=ANY_TEXT,
    limit=st.integers(0, 30),
    layout=st.sampled_from(["unified", "split"]),
)
def test_folding_hides_no_more_than_it_says(old: str, new: str, limit: int, layout: Layout) -> None:
    """The rows shown are rows of the diff, in order; the summaries and the last fold line
    account for every file line, every addition and every removal left out."""
    rows = rows_of(diff_lines(old, new), layout)
    folded = fold_rows(rows, limit)
    if len(rows) <= limit + 1:
        assert folded == rows
        return
    assert len(folded) <= limit + 1
    shown = [row for row in folded if row[0] is None or row[0].kind != "fold"]
    positions = [next(i for i, r in enumerate(rows) if r is row) for row in shown]
    assert positions == sorted(set(positions))  # a subsequence, each row once
    total_added, total_removed = count_changes(file_lines(rows))
    added, removed = count_changes(file_lines(shown))
    count = len(file_lines(shown))
    for left, right in folded:
        if left is None or left.kind != "fold":
            continue
        assert left == right  # a fold line stands across both sides
        summary, last = SUMMARY.fullmatch(left.text), FOLD.fullmatch(left.text)
        if summary:
            hidden = int(summary.group(1))
            assert hidden >= 2  # a summary never stands for one line: it would save nothing
            count += hidden
            removed += hidden if "removed" in left.text else 0
        else:
            assert last is not None, left.text
            assert (left, right) == folded[-1]
            count += int(last.group(1))
            added += int(last.group(2))
            removed += int(last.group(3))
    assert (count, added, removed) == (len(file_lines(rows)), total_added, total_removed)


def room_for_additions(rows: Sequence[Row]) -> int:
    """The rows a diff needs when every run of two or more rows that add nothing is one
    summary line: hunk headers, rows that add, and one row per quiet run."""

    def kind(row: Row) -> str:
        left, right = row
        if right is not None and right.kind == "added":
            return "added"
        return (left or right).kind  # type: ignore[union-attr]

    kinds = [kind(row) for row in rows]
    needed = 0
    for index, current in enumerate(kinds):
        quiet = current in ("context", "removed")
        needed += not quiet or index == 0 or kinds[index - 1] != current
    return needed


@given(
    old=ANY_TEXT,
    new=ANY_TEXT,
    limit=st.integers(0, 30),
    layout=st.sampled_from(["unified", "split"]),
)
def test_every_added_line_is_shown_when_the_additions_fit(
    old: str, new: str, limit: int, layout: Layout
) -> None:
    rows = rows_of(diff_lines(old, new), layout)
    if room_for_additions(rows) > limit + 1:
        return
    folded = fold_rows(rows, limit)
    added = [line for line in file_lines(rows) if line.kind == "added"]
    assert [line for line in file_lines(folded) if line.kind == "added"] == added
    assert not any(
        left is not None and left.kind == "fold" and "more" in left.text for left, _ in folded
    )


@given(old=TEXT, new=TEXT, limit=st.integers(0, 30))
def test_fold_is_the_unified_rows_folded(old: str, new: str, limit: int) -> None:
    lines = diff_lines(old, new)
    assert fold(lines, limit) == [
        left if left is not None else right for left, right in fold_rows(unified_rows(lines), limit)
    ]


# --- rendering -------------------------------------------------------------------------


def plain(renderable: RenderableType, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def segments(renderable: RenderableType, width: int) -> list[Segment]:
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    return list(console.render(renderable, console.options.update_width(width)))


def test_unified_shows_the_header_numbers_and_marks() -> None:
    text = plain(
        render_unified("src/greet.py", OLD_PY, NEW_PY, width=80, folded=False, styles=STYLES), 80
    )
    lines = text.splitlines()
    assert lines[0] == "src/greet.py  +5 -3"
    assert lines[1].rstrip() == "@@ -1,8 +1,10 @@"
    assert [line.rstrip() for line in lines[2:8]] == [
        "1  1   import os",
        "   2 + import sys",
        "2  3",
        "3    - def greet(name):",
        '4    -     """Say hello."""',
        '5    -     print("hello", name)',
    ]
    assert lines[12].rstrip() == "6  8       return 1"
    assert lines[-1].rstrip() == "8 10   class A:"


def test_unified_wraps_long_lines_under_the_code() -> None:
    new = "x = 1\ny = '" + "a" * 50 + "'\n"
    text = plain(render_unified("a.py", "x = 1\n", new, width=30, folded=False, styles=STYLES), 30)
    assert text.splitlines()[2:] == [
        "1 1   x = 1                   ",
        "  2 + y = 'aaaaaaaaaaaaaaaaaaa",
        "      aaaaaaaaaaaaaaaaaaaaaaaa",
        "      aaaaaaa'                ",
    ]


def test_unified_wraps_at_word_boundaries() -> None:
    new = "x = 1\nmessage = 'the quick brown fox jumps over the lazy dog'\n"
    text = plain(render_unified("a.py", "x = 1\n", new, width=30, folded=False, styles=STYLES), 30)
    assert [line.rstrip() for line in text.splitlines()[3:]] == [
        "  2 + message = 'the quick",
        "      brown fox jumps over the",
        "      lazy dog'",
    ]


def test_side_by_side_puts_old_left_and_new_right() -> None:
    renderable = render_side_by_side(
        "src/greet.py", OLD_PY, NEW_PY, width=121, folded=False, styles=STYLES
    )
    lines = plain(renderable, 121).splitlines()
    assert lines[0] == "src/greet.py  +5 -3"
    assert all(len(line) == 121 for line in lines[1:])
    rows = [tuple(part.rstrip() for part in line.split("│")) for line in lines[2:]]
    assert rows[:8] == [
        ("1   import os", "  1   import os"),
        ("", "  2 + import sys"),
        ("2", "  3"),
        ("3 - def greet(name):", "  4 + def greet(name, loud=False):"),
        ('4 -     """Say hello."""', '  5 +     """Say hello'),
        ('5 -     print("hello", name)', '  6 +     loudly if asked."""'),
        ("", '  7 +     print("hello", name.upper() if loud else name, fi…'),
        ("6       return 1", "  8       return 1"),
    ]


def test_side_by_side_crops_long_lines_with_an_ellipsis() -> None:
    new = "x = 1\ny = '" + "a" * 80 + "'\n"
    lines = plain(
        render_side_by_side("a.py", "x = 1\n", new, width=41, folded=False, styles=STYLES), 41
    ).splitlines()
    assert len(lines) == 4  # header, hunk, two rows: nothing wraps
    assert lines[3] == "                    │ 2 + y = 'aaaaaaaaa…"
    old = "x = 1\ny = '" + "b" * 80 + "'\n"
    lines = plain(
        render_side_by_side("a.py", old, new, width=41, folded=False, styles=STYLES), 41
    ).splitlines()
    assert lines[3] == "2 - y = 'bbbbbbbbb… │ 2 + y = 'aaaaaaaaa…"


def test_a_new_file_says_so_and_is_shown_in_one_column() -> None:
    for render in (render_unified, render_side_by_side):
        lines = plain(
            render("notes.md", None, "# Title\n\nText.\n", width=130, folded=False, styles=STYLES),
            130,
        ).splitlines()
        assert lines[0] == "notes.md  new file"
        assert [line.rstrip() for line in lines[1:]] == ["1 + # Title", "2 +", "3 + Text."]


def test_no_changes_and_empty_files_are_said() -> None:
    for render in (render_unified, render_side_by_side):
        assert plain(
            render("a.txt", "same\n", "same\n", width=60, folded=False, styles=STYLES)
        ).rstrip().splitlines() == [
            "a.txt  +0 -0",
            "no changes",
        ]
        assert (
            plain(render("a.txt", None, "", width=60, folded=False, styles=STYLES))
            .splitlines()[1]
            .rstrip()
            == "empty file"
        )


def test_a_folded_split_view_shows_the_new_lines_beside_the_old() -> None:
    """The audit's card at 200 columns: the folded split view had an empty right column
    (the unified lines were cut first, all of them removed ones, then paired)."""
    old = "".join(f"line {n} of my own notes\n" for n in range(1, 63))
    new = "# Notes\n\nWritten by the agent.\n\n- one\n- two\n"
    shown = plain(
        render_side_by_side("notes.md", old, new, width=196, folded=True, limit=8, styles=STYLES),
        196,
    ).splitlines()
    assert shown[0] == "notes.md  +6 -62"
    assert len(shown) == 10  # the header, then at most 8 + 1 rows
    rows = [row.split("│") for row in shown[2:8]]
    assert [left.split("- ", 1)[1].strip() for left, _ in rows] == [
        f"line {n} of my own notes" for n in range(1, 7)
    ]
    assert [right.split("+", 1)[1].strip() for _, right in rows] == [
        line.strip() for line in new.splitlines()
    ]
    assert shown[-1].strip() == "… 55 lines removed"


def test_a_long_diff_is_folded_and_expands() -> None:
    old, new = numbered(200, changed=range(1, 201, 2))
    # Ten rows shown: the hunk header, then changed lines and one unchanged line after
    # another; unified, a changed line takes two rows (three changes shown, the other
    # 291 lines folded), split one (five changes shown beside their old lines).
    for render, fold_text in (
        (render_unified, "… 291 more lines (+97 -97)"),
        (render_side_by_side, "… 286 more lines (+95 -95)"),
    ):
        folded = plain(
            render("n.txt", old, new, width=130, folded=True, limit=10, styles=STYLES)
        ).splitlines()
        assert folded[0] == "n.txt  +100 -100"
        assert len(folded) == 12
        assert folded[-1].rstrip() == fold_text
        expanded = plain(
            render("n.txt", old, new, width=130, folded=False, limit=10, styles=STYLES)
        )
        assert "more lines" not in expanded
        assert "LINE 199" in expanded
    unified = plain(
        render_unified("n.txt", old, new, width=100, folded=True, limit=10, styles=STYLES)
    )
    assert len(unified.splitlines()) == 12  # header, 10 lines, the fold line


def test_the_header_keeps_the_end_of_a_long_path() -> None:
    path = "very/deep/folder/structure/of/a/project/src/module/file.py"
    header = plain(
        render_unified(path, "a\n", "b\n", width=30, folded=False, styles=STYLES), 30
    ).splitlines()[0]
    assert header == "…/src/module/file.py  +1 -1"


def test_render_diff_picks_the_layout_by_width() -> None:
    wide = plain(render_diff("a.txt", "a\n", "b\n", width=120, folded=False, styles=STYLES), 120)
    narrow = plain(render_diff("a.txt", "a\n", "b\n", width=119, folded=False, styles=STYLES), 119)
    assert "│" in wide
    assert "│" not in narrow
    forced = plain(
        render_diff("a.txt", "a\n", "b\n", width=160, folded=False, styles=STYLES, layout="unified")
    )
    assert "│" not in forced


def colour_of(found: list[Segment], text: str) -> RichColor | None:
    """The foreground colour of the first segment that contains `text`."""
    for segment in found:
        if text in segment.text and segment.style is not None:
            return segment.style.color
    raise AssertionError(f"{text!r} is not on screen")


def background_of(found: list[Segment], text: str) -> RichColor | None:
    for segment in found:
        if text in segment.text and segment.style is not None:
            return segment.style.bgcolor
    raise AssertionError(f"{text!r} is not on screen")


@pytest.mark.parametrize("layout", ["unified", "split"])
def test_python_is_highlighted_and_changed_rows_are_tinted(layout: Layout) -> None:
    renderable = render_diff(
        "greet.py",
        OLD_PY,
        NEW_PY,
        width=130,
        folded=False,
        styles=STYLES,
        layout=layout,
    )
    found = segments(renderable, 130)
    keyword = colour_of(found, "import")
    assert keyword is not None
    assert keyword != colour_of(found, "os")
    # The docstring spans two lines: its second line is coloured as a string too, because
    # the whole text is highlighted before it is cut into lines.
    string = colour_of(found, "Say hello")
    assert string is not None
    assert colour_of(found, "loudly if asked") == string
    assert background_of(found, "sys") == RichColor.parse(STYLES.added_background)
    assert background_of(found, "print") == RichColor.parse(STYLES.removed_background)  # old
    assert background_of(found, "return") is None


def test_an_unknown_file_type_is_plain_text() -> None:
    found = segments(
        render_unified(
            "data.zzz", "import x\n", "import y\n", width=60, folded=False, styles=STYLES
        ),
        60,
    )
    assert colour_of(found, "import") is None


def test_the_changed_words_of_a_replaced_line_are_marked() -> None:
    found = segments(
        render_unified(
            "a.txt",
            "alpha beta gamma\n",
            "alpha BETA gamma\n",
            width=60,
            folded=False,
            styles=STYLES,
        ),
        60,
    )
    emphasis = [s for s in found if s.text == "BETA"]
    assert emphasis
    assert emphasis[0].style is not None
    assert emphasis[0].style.bold
    assert emphasis[0].style.color == RichColor.parse("#A3DB96")
    assert all(not (s.style and s.style.bold) for s in found if "gamma" in s.text)


def test_without_tints_the_changed_lines_take_the_foreground_colours() -> None:
    """An ANSI theme paints no backgrounds: added and removed code is green and red."""
    found = segments(
        render_unified("greet.py", OLD_PY, NEW_PY, width=100, folded=False, styles=ANSI_STYLES), 100
    )
    assert colour_of(found, "import sys") == RichColor.parse("color(2)")
    assert colour_of(found, "def greet(name):") == RichColor.parse("color(1)")
    assert background_of(found, "import sys") is None


def test_a_colour_that_does_not_parse_is_left_out() -> None:
    styles = DiffStyles(added_background="not a colour", added_foreground="#zzzzzz")
    found = segments(
        render_unified("a.txt", "a\n", "b\n", width=40, folded=False, styles=styles), 40
    )
    assert background_of(found, "b") is None


def test_each_side_is_highlighted_as_its_own_file() -> None:
    """A line that is code in the new file may be inside a string in the old one: the left
    column colours it as the old file reads, the right as the new file reads."""
    old, new = 'x = """\nimport os\n"""\n', "x = 1\nimport os\n"
    found = segments(
        render_side_by_side("m.py", old, new, width=120, folded=False, styles=STYLES), 120
    )
    left = [s for s in found if "import os" in s.text]
    assert len(left) == 1  # the old side: one string token
    keyword = [s for s in found if s.text == "import"]
    assert len(keyword) == 1  # the new side: a keyword
    assert left[0].style is not None
    assert keyword[0].style is not None
    assert left[0].style.color != keyword[0].style.color
    assert left[0].style.color == RichColor.parse("yellow")  # the code theme's strings


def test_removed_lines_are_highlighted_too() -> None:
    found = segments(
        render_unified("m.py", "def f():\n", "x = 1\n", width=60, folded=False, styles=STYLES), 60
    )
    assert colour_of(found, "def") is not None
    assert background_of(found, "def") == RichColor.parse(STYLES.removed_background)


@given(
    old=st.one_of(st.none(), ANY_TEXT),
    new=ANY_TEXT,
    width=st.integers(20, 140),
    folded=st.booleans(),
)
def test_every_row_fills_the_width_exactly(
    old: str | None, new: str, width: int, folded: bool
) -> None:
    """Tinted bands and the split columns only line up if every row is `width` cells."""
    for render in (render_unified, render_side_by_side):
        console = Console(width=width, record=True, color_system=None, file=io.StringIO())
        console.print(render("f.py", old, new, width=width, folded=folded, limit=5, styles=STYLES))
        lines = console.export_text().split("\n")[:-1]
        assert cell_len(lines[0]) <= width
        for line in lines[1:]:
            assert cell_len(line) == width, line


CODE_LINE = st.sampled_from(
    ['x = "a', 'b"', '"""doc', "end'''", "# note", "def f(x):", "    return x  # why", "'''", ""]
)


@given(lines=st.lists(CODE_LINE, max_size=12))
def test_cut_lines_keep_the_colours_of_the_whole_text(lines: list[str]) -> None:
    """Every character of every line has the colour Rich gives it in the whole text."""
    spans = highlight(lines, "m.py", "monokai")
    if not lines:
        assert spans is None
        return
    assert spans is not None
    code = "\n".join(lines) + "\n"
    whole = Syntax(code, "python", theme="monokai").highlight(code)
    offset = 0
    for line, line_spans in zip(lines, spans, strict=True):
        for index in range(len(line)):
            expected = whole.get_style_at_offset(Console(), offset + index).color
            mine = Text(line, spans=list(line_spans)).get_style_at_offset(Console(), index).color
            assert mine == expected, (line, index)
        offset += len(line) + 1
