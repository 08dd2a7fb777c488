"""The colours of the code in a diff: each line's syntax spans, by the file's type (the
lines lexed as one text, then cut, so tokens spanning lines are coloured right), and the
changed words of a line paired with its replacement."""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span

from cockpit.ui.diffs.model import TAB_SIZE

LineSpans = tuple[tuple[Span, ...], ...]

# Lines longer than this are not compared word by word: the cost grows with the product of
# the lengths, and a changed minified line is better shown whole.
EMPHASIS_MAX_CHARS = 400
# Below this share of common words two paired lines are different lines, not an edit of one.
EMPHASIS_MIN_RATIO = 0.4

_WORDS = re.compile(r"\w+|\s+|[^\w\s]")


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


def emphasis(old: str, new: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
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
