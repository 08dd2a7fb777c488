"""The model of a diff: its lines (`DiffLine`) in hunks as unified diff groups them, their
counts, the rows of a split or unified view, and the folding of a long one. Plain Python
on `difflib`: tested without a terminal, it imports nothing of Textual or Rich."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import Literal

from cockpit.text.sanitize import printable

Kind = Literal["context", "added", "removed", "hunk", "fold"]

TAB_SIZE = 4

MARKS: Mapping[str, str] = {"added": "+", "removed": "-", "context": " "}
"""The mark of each kind of file line in the gutter (hunk and fold lines have none)."""


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
    line = fold_line(lines_of(hidden))
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


def lines_of(rows: Iterable[Row]) -> list[DiffLine]:
    """The lines of `rows`, each once (a context or hunk row holds one line twice)."""
    lines: list[DiffLine] = []
    for left, right in rows:
        lines.extend(line for line in (left, right) if line is not None)
        if left is not None and left is right:
            lines.pop()
    return lines


def fold_line(hidden: Sequence[DiffLine]) -> DiffLine:
    """The line that stands for `hidden`: how many file lines, how many of them changed."""
    count = sum(line.kind in MARKS for line in hidden)
    added, removed = count_changes(hidden)
    noun = "line" if count == 1 else "lines"
    return DiffLine("fold", None, None, f"… {count} more {noun} (+{added} -{removed})")
