"""Diffs of the file edits an agent reports (ACP `diff` content items), for tool cards.

The model (`DiffLine`, `diff_lines`, `diff_stats`, `side_by_side`, `fold`) is plain Python on
`difflib`, so it is tested without a terminal and imports nothing of Textual. The renderers
turn it into Rich renderables a Textual `Static` shows: unified (long lines wrap) or split
(old left, new right, long lines cropped), both with line numbers, syntax highlighting by
the file's type and the theme's diff colours (`DiffStyles`).

The texts come from an agent, so they are untrusted: escape sequences and control
characters are removed before anything is compared or shown.

The `textual-diff-view` package (Toad's diff widget) was considered and not used: it is
licensed AGPL-3.0.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import Literal

from rich.cells import cell_len, chop_cells
from rich.color import Color as RichColor
from rich.console import Group, RenderableType
from rich.style import Style
from rich.syntax import RICH_SYNTAX_THEMES, Syntax
from rich.text import Span, Text

from cockpit.text.sanitize import printable

Kind = Literal["context", "added", "removed", "hunk", "fold"]
Layout = Literal["split", "unified"]
LineSpans = tuple[tuple[Span, ...], ...]

TAB_SIZE = 4
SPLIT_MIN_WIDTH = 120
"""The width a diff needs (inside its card) to be shown side by side: two columns of about
55 characters of code. A card is narrower than the terminal: this is a terminal of 158
columns with the rail shown, 126 with it hidden (README says so)."""
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

# Lines longer than this are not compared word by word: the cost grows with the product of
# the lengths, and a changed minified line is better shown whole.
EMPHASIS_MAX_CHARS = 400
# Below this share of common words two paired lines are different lines, not an edit of one.
EMPHASIS_MIN_RATIO = 0.4

_MARKS: Mapping[str, str] = {"added": "+", "removed": "-", "context": " "}
_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


# --- the model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One row of a diff. Numbers are 1-based lines of the old and new file; a removed line
    has no new number, an added line no old number, hunk and fold lines neither."""

    kind: Kind
    old_number: int | None
    new_number: int | None
    text: str


Row = tuple[DiffLine | None, DiffLine | None]
"""One row of a split view (old side, new side); a unified row has its line on one side
or, when it is on both (context, hunk and fold lines), on both."""


def split_lines(text: str) -> list[str]:
    """The lines of an agent's text as they will be shown: escape sequences and control
    characters removed (the text is untrusted), tabs expanded so widths are known. A final
    newline ends the last line rather than starting an empty one, as in a file."""
    lines = printable(text).expandtabs(TAB_SIZE).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _hunk_header(group: Sequence[tuple[str, int, int, int, int]]) -> DiffLine:
    """The `@@ -a,b +c,d @@` line of a hunk, as unified diff writes it, so it reads as
    developers expect."""
    first, last = group[0], group[-1]
    old_range = _range(first[1], last[2])
    new_range = _range(first[3], last[4])
    return DiffLine("hunk", None, None, f"@@ -{old_range} +{new_range} @@")


def _range(start: int, stop: int) -> str:
    """A hunk side's `line,count` (0-based half-open in, 1-based out); an empty side names
    the line before it, a one-line side leaves the count out."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def diff_lines(old: str | None, new: str, context: int = 3) -> list[DiffLine]:
    """The diff of `old` to `new` in hunks with `context` unchanged lines around changes,
    as unified diff groups them. A new file (`old` None) is all added lines, no hunk header:
    there is nothing to locate it in."""
    if context < 0:
        raise ValueError("context must not be negative")
    new_lines = split_lines(new)
    if old is None:
        return [DiffLine("added", None, number, text) for number, text in _numbered(new_lines)]
    old_lines = split_lines(old)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines)
    result: list[DiffLine] = []
    for group in matcher.get_grouped_opcodes(context):
        result.append(_hunk_header(group))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                result.extend(
                    DiffLine("context", i + 1, j + 1, old_lines[i])
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
                )
                continue
            result.extend(DiffLine("removed", i + 1, None, old_lines[i]) for i in range(i1, i2))
            result.extend(DiffLine("added", None, j + 1, new_lines[j]) for j in range(j1, j2))
    return result


def _numbered(lines: Sequence[str]) -> Iterable[tuple[int, str]]:
    """Lines with their 1-based numbers."""
    return enumerate(lines, start=1)


def count_changes(lines: Iterable[DiffLine]) -> tuple[int, int]:
    """(added, removed) lines among `lines`; hunk and fold lines are not file lines."""
    added = removed = 0
    for line in lines:
        added += line.kind == "added"
        removed += line.kind == "removed"
    return added, removed


def diff_stats(old: str | None, new: str) -> tuple[int, int]:
    """(added, removed) lines of the whole edit, for a header's `+N -M`; counted from the
    same diff that is shown, so the two always agree."""
    return count_changes(diff_lines(old, new, context=0))


def side_by_side(lines: Sequence[DiffLine]) -> list[Row]:
    """Rows of a split view: each run of changes pairs its removed lines (left) with its
    added lines (right) in order, the shorter side padded with None, so a replaced block
    reads across; context, hunk and fold lines stand on both sides."""
    rows: list[Row] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []
    for line in lines:
        if line.kind == "removed":
            removed.append(line)
        elif line.kind == "added":
            added.append(line)
        else:
            rows.extend(zip_longest(removed, added))
            removed.clear()
            added.clear()
            rows.append((line, line))
    rows.extend(zip_longest(removed, added))
    return rows


def unified_rows(lines: Sequence[DiffLine]) -> list[Row]:
    """The rows of a unified view in the shape of split rows: a removed line on the old
    side only, an added line on the new side only, the rest on both. So one fold rule
    serves both layouts."""
    return [
        (None if line.kind == "added" else line, None if line.kind == "removed" else line)
        for line in lines
    ]


def row_line(row: Row) -> DiffLine:
    """The one line of a unified row."""
    line = row[0] if row[0] is not None else row[1]
    assert line is not None
    return line


def fold(lines: Sequence[DiffLine], limit: int) -> list[DiffLine]:
    """A unified diff folded to at most `limit` + 1 lines (`fold_rows`)."""
    return [row_line(row) for row in fold_rows(unified_rows(lines), limit)]


def fold_rows(rows: Sequence[Row], limit: int) -> list[Row]:
    """At most `limit` + 1 rows of a diff (unified or split), so a long one does not flood
    the transcript, and what it would write is seen first.

    A diff that fits is left alone (a fold line hiding one row would take that row's room
    for nothing). Otherwise the rows that add lines, and the hunk headers, are kept; each
    run of two or more rows that add nothing (context, or removed lines) keeps as many of
    its rows as the budget allows (about the same number for every run, the first runs
    taking what is left over) and one line says what the rest was (`… 55 lines removed`,
    `… 4 unchanged lines`). When even one line per run leaves too little room for the
    additions, the first `limit` rows of that are shown and one last line counts the rest
    (`… 40 more lines (+30 -12)`)."""
    if limit < 0:
        raise ValueError("limit must not be negative")
    if len(rows) <= limit + 1:
        return list(rows)
    runs = _runs(rows)

    def size(keep: int) -> int:
        return sum(_run_size(kind, run, keep) for kind, run in runs)

    low, high = 0, limit
    while low < high:  # the most rows per quiet run that fit (the count grows with it)
        middle = (low + high + 1) // 2
        low, high = (middle, high) if size(middle) <= limit + 1 else (low, middle - 1)
    keeps = [low] * len(runs)
    spare = limit + 1 - size(low)
    for index, (kind, run) in enumerate(runs):
        grown = _run_size(kind, run, low + 1) - _run_size(kind, run, low)
        if 0 < grown <= spare:
            keeps[index] = low + 1
            spare -= grown
    squeezed = [part for index in range(len(runs)) for part in _squeeze(runs, index, keeps[index])]
    if len(squeezed) <= limit + 1:
        return [row for row, _ in squeezed]
    kept = squeezed[:limit]
    while kept and row_line(kept[-1][0]).kind in ("hunk", "fold"):
        kept.pop()
    hidden = [row for _, covered in squeezed[len(kept) :] for row in covered]
    line = fold_line(_row_lines(hidden))
    return [*(row for row, _ in kept), (line, line)]


_QUIET = ("context", "removed")
"""The kinds of rows that add nothing: a run of them may be summarised."""


def _row_kind(row: Row) -> str:
    """What a row is, for folding: "added" when its new side adds a line, else the kind
    of its line ("context", "removed", "hunk", "fold")."""
    if row[1] is not None and row[1].kind == "added":
        return "added"
    return row_line(row).kind


def _runs(rows: Sequence[Row]) -> list[tuple[str, list[Row]]]:
    """The rows in maximal runs of one kind."""
    runs: list[tuple[str, list[Row]]] = []
    for row in rows:
        kind = _row_kind(row)
        if runs and runs[-1][0] == kind:
            runs[-1][1].append(row)
        else:
            runs.append((kind, [row]))
    return runs


def _run_size(kind: str, run: Sequence[Row], keep: int) -> int:
    """The rows a run takes when a quiet run keeps `keep` rows and a summary line."""
    return len(run) if kind not in _QUIET or len(run) <= keep + 1 else keep + 1


def _squeeze(
    runs: Sequence[tuple[str, list[Row]]], index: int, keep: int
) -> list[tuple[Row, list[Row]]]:
    """Run `index` as shown, each shown row with the rows it stands for. A quiet run too
    long for `keep` keeps the rows next to the changes (context at the start of a hunk
    keeps its end, at the end of a hunk its start) or, for removed lines, its first and
    last rows, and summarises the middle."""
    kind, run = runs[index]
    if _run_size(kind, run, keep) == len(run):
        return [(row, [row]) for row in run]
    before = runs[index - 1][0] if index > 0 else "hunk"
    after = runs[index + 1][0] if index + 1 < len(runs) else "hunk"
    if kind == "context" and before == "hunk":
        head = 0
    elif kind == "context" and after == "hunk":
        head = keep
    else:
        head = (keep + 1) // 2
    tail = keep - head
    middle = run[head : len(run) - tail]
    count = len(middle)
    noun = "line" if count == 1 else "lines"
    text = f"… {count} {noun} removed" if kind == "removed" else f"… {count} unchanged {noun}"
    summary = DiffLine("fold", None, None, text)
    return [
        *((row, [row]) for row in run[:head]),
        ((summary, summary), middle),
        *((row, [row]) for row in run[len(run) - tail :]),
    ]


def _row_lines(rows: Iterable[Row]) -> list[DiffLine]:
    """The lines of `rows`, each once (a context or hunk row holds one line twice)."""
    lines: list[DiffLine] = []
    for left, right in rows:
        lines.extend(line for line in (left, right) if line is not None)
        if left is not None and left is right:
            lines.pop()
    return lines


def fold_line(hidden: Sequence[DiffLine]) -> DiffLine:
    """The line that stands for `hidden`: how many file lines, how many of them changed."""
    count = sum(line.kind in _MARKS for line in hidden)
    added, removed = count_changes(hidden)
    noun = "line" if count == 1 else "lines"
    return DiffLine("fold", None, None, f"… {count} more {noun} (+{added} -{removed})")


# --- colours -----------------------------------------------------------------------------


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
class _Tint:
    """How one kind of line is drawn."""

    row: Style  # behind the whole row
    mark: Style  # the +/- sign
    text: Style | None  # over the code, when no background carries the meaning
    emphasis: Style  # the changed words of a line paired with its replacement


@dataclass(frozen=True, slots=True)
class _Palette:
    """The resolved styles of one render: per kind of line, the gutter, the header."""

    tints: Mapping[str, _Tint]
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


def _tint(background: str, foreground: str) -> _Tint:
    """The drawing of added or removed lines. With a background the code keeps its syntax
    colours; without one (ANSI themes) the code takes the foreground colour, so the change
    still shows."""
    back = _colour(background)
    fore = _colour(foreground)
    colour = Style(color=fore)
    return _Tint(
        row=Style(bgcolor=back),
        mark=colour + Style(bold=True),
        text=None if back is not None else colour,
        emphasis=colour + Style(bold=True),
    )


def _palette(styles: DiffStyles) -> _Palette:
    """The Rich styles of a `DiffStyles`, resolved once per render."""
    added = _tint(styles.added_background, styles.added_foreground)
    removed = _tint(styles.removed_background, styles.removed_foreground)
    plain = _Tint(row=Style(), mark=Style(), text=None, emphasis=Style())
    return _Palette(
        tints={"added": added, "removed": removed, "context": plain},
        gutter=Style(color=_colour(styles.gutter)),
        header=Style(bold=True),
        syntax_theme=styles.syntax_theme,
    )


def choose_layout(width: int) -> Layout:
    """Split needs room for two readable columns of code; below that, unified."""
    return "split" if width >= SPLIT_MIN_WIDTH else "unified"


# --- highlighting ------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _lexer(name: str) -> str | None:
    """The Pygments lexer for a file name, by its patterns (`*.py`, `Makefile`, ...), None
    for unknown types. Asked once per name: the first look-up loads Pygments' whole table.
    (Rich's `Syntax` then builds the lexer keeping leading and trailing blank lines, which
    the line numbers need.)"""
    found = Syntax.guess_lexer(name, code=" ")
    return None if found in ("default", "text") else found


def _foreground(style: str | Style) -> Style:
    """A token style without its background, so a diff row's tint shows through."""
    parsed = Style.parse(style) if isinstance(style, str) else style
    return Style(
        color=parsed.color, bold=parsed.bold, italic=parsed.italic, underline=parsed.underline
    )


def highlight(lines: Sequence[str], path: str, theme: str) -> LineSpans | None:
    """Per line, the colour spans of the file's syntax. The lines are highlighted as one
    text, then cut, so tokens spanning lines (strings, comments) are coloured right. None
    (plain text) for an unknown type."""
    lexer = _lexer(path.replace("\\", "/").rsplit("/", 1)[-1])
    if lexer is None or not lines:
        return None
    return _line_spans("\n".join(lines) + "\n", lexer, theme)


@lru_cache(maxsize=32)
def _line_spans(code: str, lexer: str, theme: str) -> LineSpans | None:
    """The spans of `code`'s lines, token backgrounds left out. Cached, since a card is drawn
    again on every resize, fold and layout switch and lexing is most of the cost. None if
    the lexer does not give the text back unchanged (the numbers would no longer match)."""
    whole = Syntax(code, lexer, theme=theme, tab_size=TAB_SIZE).highlight(code)
    if whole.plain.rstrip("\n") != code.rstrip("\n"):
        return None
    lines = code.split("\n")[:-1]
    starts = _starts(lines, separator=1)
    per_line: list[list[Span]] = [[] for _ in lines]
    styles: dict[str | Style, Style] = {}
    for span in whole.spans:
        index = bisect_right(starts, span.start) - 1
        start = span.start
        while index < len(lines) and start < span.end:
            end = min(span.end, starts[index] + len(lines[index]))
            if end > start:
                style = _cached(styles, span.style)
                per_line[index].append(Span(start - starts[index], end - starts[index], style))
            index += 1
            start = max(start, starts[index]) if index < len(lines) else start
    return tuple(tuple(spans) for spans in per_line)


def _cached(cache: dict[str | Style, Style], style: str | Style) -> Style:
    """`_foreground(style)`, once per distinct style."""
    if style not in cache:
        cache[style] = _foreground(style)
    return cache[style]


def _emphasis(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The changed character ranges of a line and its replacement, compared word by word so
    the marks fall on whole words; none when the lines are too long or too different to be
    an edit of one another."""
    if max(len(old), len(new)) > EMPHASIS_MAX_CHARS:
        return [], []
    old_words, new_words = _WORDS.findall(old), _WORDS.findall(new)
    matcher = difflib.SequenceMatcher(None, old_words, new_words, autojunk=False)
    if matcher.ratio() < EMPHASIS_MIN_RATIO:
        return [], []
    old_starts, new_starts = _starts(old_words), _starts(new_words)
    old_ranges: list[tuple[int, int]] = []
    new_ranges: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_ranges.append((old_starts[i1], old_starts[i2]))
        if j2 > j1:
            new_ranges.append((new_starts[j1], new_starts[j2]))
    return old_ranges, new_ranges


def _starts(pieces: Sequence[str], separator: int = 0) -> list[int]:
    """Character offsets where each piece starts, and the end, in the pieces joined with
    `separator` characters between them."""
    starts = [0]
    for piece in pieces:
        starts.append(starts[-1] + len(piece) + separator)
    return starts


# --- rendering ---------------------------------------------------------------------------


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
        palette: _Palette,
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
            old_ranges, new_ranges = _emphasis(left.text, right.text)
            self.ranges["removed", left.old_number] = old_ranges
            self.ranges["added", right.new_number] = new_ranges

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
    path: str, old: str | None, lines: Sequence[DiffLine], width: int, palette: _Palette
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


def _note(text: str, width: int, palette: _Palette) -> Text:
    """A full-width line that is about the diff, not of the file: hunk headers, the fold
    line, `no changes`."""
    note = Text(text, style=palette.gutter + Style(italic=True), no_wrap=True)
    note.truncate(width, overflow="ellipsis", pad=True)
    return note


def _wrap(text: Text, width: int) -> list[Text]:
    """`text` cut every `width` cells (code wraps at the column, not at words, so what is
    shown is exactly what is in the file)."""
    pieces = chop_cells(text.plain, width)
    offsets: list[int] = []
    position = 0
    for piece in pieces[:-1]:
        position += len(piece)
        offsets.append(position)
    return list(text.divide(offsets)) if pieces else [text]


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
) -> RenderableType:
    """The diff as one column: old and new line numbers, a +/- mark, the code wrapped to
    `width` under itself. Every row is `width` cells wide so tints make even bands."""
    palette = _palette(styles)
    lines, shown_rows = _shown_rows(old, new, folded, limit, "unified")
    shown = [row_line(row) for row in shown_rows]
    sides = _Sides(path, old, new, lines, shown, palette)
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
            row.append(f"{_MARKS[line.kind]} " if index == 0 else "  ", tint.mark)
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
    cell.append(f"{_MARKS[line.kind]} ", tint.mark)
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
) -> RenderableType:
    """The diff as two columns, old left and new right, a replaced block read across;
    long lines are cropped with an ellipsis so the columns stay aligned. A new file has no
    old side, so it is shown unified: half the width would stay empty."""
    if old is None:
        return render_unified(
            path, old, new, width=width, folded=folded, limit=limit, styles=styles
        )
    palette = _palette(styles)
    lines, shown_rows = _shown_rows(old, new, folded, limit, "split")
    shown = _row_lines(shown_rows)
    sides = _Sides(path, old, new, lines, shown, palette)
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
) -> RenderableType:
    """The diff in `layout`, or in the one `choose_layout` picks for `width`."""
    render = render_side_by_side if (layout or choose_layout(width)) == "split" else render_unified
    return render(path, old, new, width=width, folded=folded, limit=limit, styles=styles)
