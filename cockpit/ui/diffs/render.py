"""Renderings of a diff as Rich renderables a Textual `Static` shows: unified (long lines
wrap at word boundaries) or split (old left, new right, long lines cropped), both with line
numbers, the file's syntax colours (`highlight`) and the theme's diff colours (`palette`),
headed by the path and the counts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from rich.cells import cell_len, chop_cells
from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from cockpit.text.sanitize import printable
from cockpit.ui.diffs.highlight import emphasis, highlight
from cockpit.ui.diffs.model import (
    MARKS,
    DiffLine,
    Row,
    count_changes,
    diff_lines,
    fold_rows,
    lines_of,
    row_line,
    side_by_side,
    split_lines,
    unified_rows,
)
from cockpit.ui.diffs.palette import DiffPalette, DiffStyles, diff_palette
from cockpit.ui.diffs.wrapping import wrap_offsets

Layout = Literal["split", "unified"]

SPLIT_MIN_WIDTH = 120
"""The width a diff needs (inside its card) to be shown side by side: two columns of about
55 characters of code. A card is narrower than the terminal: this is a terminal of 158
columns with the rail shown, 126 with it hidden (README says so)."""


def choose_layout(width: int) -> Layout:
    """Split needs room for two readable columns of code; below that, unified."""
    return "split" if width >= SPLIT_MIN_WIDTH else "unified"


class _Sides:
    """The old and new file's highlighted lines and the changed words of paired lines: what
    a row needs besides its DiffLine."""

    def __init__(
        self,
        path: str,
        old: str | None,
        new: str,
        lines: Sequence[DiffLine],
        shown: Sequence[DiffLine],
        palette: DiffPalette,
    ) -> None:
        # Only lines up to the last one shown are highlighted: a folded diff of a long file
        # costs what it shows.
        old_count = max((line.old_number or 0 for line in shown), default=0)
        new_count = max((line.new_number or 0 for line in shown), default=0)
        old_lines = split_lines(old)[:old_count] if old is not None else []
        new_lines = split_lines(new)[:new_count]
        self.lines = {"old": old_lines, "new": new_lines}
        self.spans = {
            "old": highlight(old_lines, path, palette.syntax_theme),
            "new": highlight(new_lines, path, palette.syntax_theme),
        }
        self.palette = palette
        self.marks: Mapping[DiffLine, str] = {}
        """A cell after a line's +/- (the changes screen's chosen and commented lines)."""
        self.ranges: dict[tuple[str, int], list[tuple[int, int]]] = {}
        # A removed line and the added line that replaces it are paired as in the whole
        # diff (folding may show one without the other, or summarise lines between them).
        visible = set(shown)
        for left, right in side_by_side(lines):
            if left is None or right is None or left.kind != "removed" or right.kind != "added":
                continue
            if left not in visible or right not in visible:
                continue
            assert left.old_number is not None
            assert right.new_number is not None
            old_ranges, new_ranges = emphasis(left.text, right.text)
            self.ranges["removed", left.old_number] = old_ranges
            self.ranges["added", right.new_number] = new_ranges

    def sign(self, line: DiffLine) -> Text:
        """A line's +/- and the cell after it: blank, or its mark reversed to stand out."""
        tint = self.palette.tints[line.kind]
        mark = self.marks.get(line)
        if mark is None:
            return Text(f"{MARKS[line.kind]} ", tint.mark)
        return Text.assemble((MARKS[line.kind], tint.mark), (mark, tint.mark + Style(reverse=True)))

    def code(self, line: DiffLine, side: Literal["old", "new"]) -> Text:
        """The line's text as shown on `side` (context lines are on both): highlighted,
        recoloured where the theme has no tint, its changed words marked."""
        number = line.old_number if side == "old" else line.new_number
        lines, spans = self.lines[side], self.spans[side]
        text = Text(line.text)
        if spans and number and number <= len(lines) and lines[number - 1] == line.text:
            text.spans = list(spans[number - 1])
        tint = self.palette.tints[line.kind]
        if tint.text is not None:
            text = Text(text.plain, style=tint.text)
        for start, end in self.ranges.get((line.kind, number or 0), []):
            text.stylize(tint.emphasis, start, end)
        return text


def _clean_path(path: str) -> str:
    """The path on one line, without escapes (it is untrusted too)."""
    return re.sub(r"\s", " ", printable(path)).strip()


def _header(
    path: str, old: str | None, lines: Sequence[DiffLine], width: int, palette: DiffPalette
) -> Text:
    """`path  +N -M` (or `new file`), the path shortened from the left when the width is
    short, since its end names the file."""
    stats = Text()
    if old is None:
        stats.append("new file", palette.tints["added"].mark)
    else:
        added, removed = count_changes(lines)
        stats.append(f"+{added}", palette.tints["added"].mark)
        stats.append(" ")
        stats.append(f"-{removed}", palette.tints["removed"].mark)
    name = _clean_path(path)
    room = max(width - stats.cell_len - 2, 1)
    if cell_len(name) > room:
        name = "…" + _tail_cells(name, room - 1)
    header = Text(name, style=palette.header, no_wrap=True, overflow="crop")
    header.append("  ")
    header.append_text(stats)
    return header


def _tail_cells(text: str, width: int) -> str:
    """The end of `text` that fits in `width` cells, from a folder boundary if it has one
    (a whole folder name reads better than its last letters)."""
    pieces = chop_cells(text[::-1], max(width, 1))
    tail = pieces[0][::-1] if pieces and width > 0 else ""
    folder = tail.find("/")
    return tail[folder:] if folder >= 0 else tail


def _number(value: int | None, width: int) -> str:
    """A right-aligned line number, or blanks where the side has no line."""
    return f"{value:>{width}}" if value is not None else " " * width


def _digits(lines: Iterable[DiffLine], side: Literal["old", "new"]) -> int:
    """The width of the largest line number on a side, so the numbers line up."""
    numbers = [line.old_number if side == "old" else line.new_number for line in lines]
    return len(str(max((number or 0 for number in numbers), default=0)))


def _note(text: str, width: int, palette: DiffPalette) -> Text:
    """A full-width line that is about the diff, not of the file: hunk headers, the fold
    line, `no changes`."""
    note = Text(text, style=palette.gutter + Style(italic=True), no_wrap=True)
    note.truncate(width, overflow="ellipsis", pad=True)
    return note


def _wrap(text: Text, width: int) -> list[Text]:
    """`text` in lines of `width` cells, broken at word boundaries (`wrap_offsets`): every
    character is kept, so what is shown is exactly what is in the file."""
    return list(text.divide(wrap_offsets(text.plain, width))) if text.plain else [text]


def _shown_rows(
    old: str | None, new: str, folded: bool, limit: int, layout: Layout
) -> tuple[list[DiffLine], list[Row]]:
    """The whole diff (for the header's counts) and the rows to show in `layout`, paired
    before they are folded, so that a folded split view shows the same additions as the
    unified one would, beside what they replace."""
    lines = diff_lines(old, new)
    rows = side_by_side(lines) if layout == "split" else unified_rows(lines)
    return lines, fold_rows(rows, limit) if folded else rows


def _empty_note(old: str | None, lines: Sequence[DiffLine]) -> str | None:
    """What to say when there are no lines to show."""
    if lines:
        return None
    return "empty file" if old is None else "no changes"


def render_unified(
    path: str,
    old: str | None,
    new: str,
    *,
    width: int,
    folded: bool,
    limit: int = 40,
    styles: DiffStyles,
    marks: Mapping[DiffLine, str] | None = None,
) -> RenderableType:
    """The diff as one column: old and new line numbers, a +/- mark, the code wrapped to
    `width` under itself. Every row is `width` cells wide so tints make even bands."""
    palette = diff_palette(styles)
    lines, shown_rows = _shown_rows(old, new, folded, limit, "unified")
    shown = [row_line(row) for row in shown_rows]
    sides = _Sides(path, old, new, lines, shown, palette)
    sides.marks = marks or {}
    old_width, new_width = _digits(shown, "old"), _digits(shown, "new")
    rows: list[Text] = [_header(path, old, lines, width, palette)]
    empty = _empty_note(old, shown)
    if empty:
        rows.append(_note(empty, width, palette))
    for line in shown:
        if line.kind in ("hunk", "fold"):
            rows.append(_note(line.text, width, palette))
            continue
        gutter = f"{_number(line.old_number, old_width)} {_number(line.new_number, new_width)} "
        if old is None:  # a new file has no old numbers: no empty column for them
            gutter = f"{_number(line.new_number, new_width)} "
        tint = palette.tints[line.kind]
        code_width = max(width - len(gutter) - 2, 1)
        code = sides.code(line, "old" if line.kind == "removed" else "new")
        for index, chunk in enumerate(_wrap(code, code_width)):
            row = Text(style=tint.row, no_wrap=True, overflow="crop")
            row.append(gutter if index == 0 else " " * len(gutter), palette.gutter)
            row.append_text(sides.sign(line) if index == 0 else Text("  ", tint.mark))
            row.append_text(chunk)
            row.truncate(width, pad=True)
            rows.append(row)
    return Group(*rows)


def _half(
    line: DiffLine | None,
    side: Literal["old", "new"],
    number_width: int,
    width: int,
    sides: _Sides,
) -> Text:
    """One side of a split row, `width` cells: number, mark, code cropped with an
    ellipsis; blank where this side has no line. A blank cell on each side of the divider
    keeps the code and the numbers off it."""
    cell = Text(no_wrap=True, overflow="crop")
    if line is None:
        cell.truncate(width, pad=True)
        return cell
    palette = sides.palette
    tint = palette.tints[line.kind]
    number = line.old_number if side == "old" else line.new_number
    cell.style = tint.row
    lead = " " if side == "new" else ""
    cell.append(f"{lead}{_number(number, number_width)} ", palette.gutter)
    cell.append_text(sides.sign(line))
    room = width - cell.cell_len - (1 if side == "old" else 0)
    if room > 0:
        code = sides.code(line, side)
        code.truncate(room, overflow="ellipsis", pad=True)
        cell.append_text(code)
    cell.truncate(width, pad=True)
    return cell


def render_side_by_side(
    path: str,
    old: str | None,
    new: str,
    *,
    width: int,
    folded: bool,
    limit: int = 40,
    styles: DiffStyles,
    marks: Mapping[DiffLine, str] | None = None,
) -> RenderableType:
    """The diff as two columns, old left and new right, a replaced block read across;
    long lines are cropped with an ellipsis so the columns stay aligned. A new file has no
    old side, so it is shown unified: half the width would stay empty."""
    if old is None:
        return render_unified(
            path, old, new, width=width, folded=folded, limit=limit, styles=styles, marks=marks
        )
    palette = diff_palette(styles)
    lines, shown_rows = _shown_rows(old, new, folded, limit, "split")
    shown = lines_of(shown_rows)
    sides = _Sides(path, old, new, lines, shown, palette)
    sides.marks = marks or {}
    old_width, new_width = _digits(shown, "old"), _digits(shown, "new")
    left_width = (width - 1) // 2
    right_width = width - 1 - left_width
    rows: list[Text] = [_header(path, old, lines, width, palette)]
    empty = _empty_note(old, shown)
    if empty:
        rows.append(_note(empty, width, palette))
    for left, right in shown_rows:
        if left is not None and left.kind in ("hunk", "fold"):
            rows.append(_note(left.text, width, palette))
            continue
        row = _half(left, "old", old_width, left_width, sides)
        row.append("│", palette.gutter)
        row.append_text(_half(right, "new", new_width, right_width, sides))
        rows.append(row)
    return Group(*rows)


def render_diff(
    path: str,
    old: str | None,
    new: str,
    *,
    width: int,
    folded: bool,
    limit: int = 40,
    styles: DiffStyles,
    layout: Layout | None = None,
    marks: Mapping[DiffLine, str] | None = None,
) -> RenderableType:
    """The diff in `layout`, or in the one `choose_layout` picks for `width`. `marks`: a
    mark beside some lines' +/- (the changes screen's)."""
    render = render_side_by_side if (layout or choose_layout(width)) == "split" else render_unified
    return render(
        path, old, new, width=width, folded=folded, limit=limit, styles=styles, marks=marks
    )
