"""The rules of the changes screen, without a screen: a changed file's line in the list,
its hunks and their changed lines (what a comment can point at), a comment on one, the
views (the whole work against the base, or one turn's), the plan a merge asks about, and
what a merge's result says."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cockpit.api import Checkpoint, FileChange, MergeResult
from cockpit.text.review import ReviewComment, place, short_quote
from cockpit.ui.diffs.model import DiffLine, count_changes, diff_lines

MARKS = {"added": "A", "modified": "M", "deleted": "D"}

CHOSEN = "▸"
"""The gutter mark of the lines a comment would go on now."""
NOTED = "✎"
"""The gutter mark of a line that has a comment."""

ASK_TO_COMMIT = (
    "Commit the changes in this worktree on its branch, with a message that says what they"
    " do and why (stage everything you changed; leave ignored files alone)."
)
"""The prompt an empty commit message sends: the agent writes the message."""


@dataclass(frozen=True)
class Hunk:
    """A run of changed lines a comment can point at: its lines in the new file (the old
    file's, for lines only removed) and its first line as it reads now (its first removed
    line when it only removes), to quote."""

    first: int
    last: int
    quote: str
    lines: tuple[DiffLine, ...] = ()
    """Its changed lines, in the diff's order: `j` and `k` pick one."""


@dataclass(frozen=True)
class Target:
    """Where a comment goes: hunk `hunk`, the whole of it (`line` None) or its line `line`."""

    hunk: int = 0
    line: int | None = None


def file_line(change: FileChange, comments: int = 0, *, outside: bool = False) -> str:
    """A changed file in the list: its mark, its path, its counts (or why no diff); in a
    turn's view, a change made between turns says so."""
    mark = MARKS.get(change.status, "?")
    if not change.readable:
        counts = "binary" if change.binary else "too large"
    else:
        added, removed = count_changes(diff_lines(change.old_text, change.new_text or ""))
        counts = f"+{added} -{removed}"
    noted = f"  {NOTED}{comments}" if comments else ""
    between = "  (between turns)" if outside else ""
    return f"{mark} {change.path}  {counts}{between}{noted}"


def hunks(change: FileChange) -> list[Hunk]:
    """The hunks of a change, in order (none for a file without texts)."""
    if not change.readable:
        return []
    found: list[Hunk] = []
    run: list[DiffLine] = []
    for line in [*diff_lines(change.old_text, change.new_text or ""), None]:
        if line is not None and line.kind in ("added", "removed"):
            run.append(line)
            continue
        if run:
            found.append(_hunk(run))
            run = []
    return found


def _hunk(run: Sequence[DiffLine]) -> Hunk:
    numbers = [line.new_number for line in run if line.new_number is not None]
    if not numbers:  # only removed lines: where they were
        numbers = [line.old_number for line in run if line.old_number is not None]
    added = [line.text for line in run if line.kind == "added"]
    return Hunk(min(numbers), max(numbers), added[0] if added else run[0].text, tuple(run))


def number(line: DiffLine) -> int:
    """A changed line's number: in the new file, or in the old one for a removed line."""
    found = line.new_number if line.new_number is not None else line.old_number
    return found or 0


def step_line(sizes: Sequence[int], at: Target, step: int) -> Target:
    """The changed line `step` lines on from `at`, across hunks and round the end (`sizes`:
    each hunk's number of lines). From a whole hunk, the first step lands on its first
    line going down, its last going up."""
    if not sizes or sum(sizes) == 0:
        return Target()
    hunk = min(max(at.hunk, 0), len(sizes) - 1)
    if at.line is None and sizes[hunk]:
        return Target(hunk, 0 if step > 0 else sizes[hunk] - 1)
    flat = [(h, i) for h, size in enumerate(sizes) for i in range(size)]
    spot = (hunk, at.line if at.line is not None else 0)
    here = flat.index(spot) if spot in flat else 0
    found = flat[(here + step) % len(flat)]
    return Target(*found)


def step_hunk(count: int, at: Target, step: int) -> Target:
    """The whole hunk `step` hunks on from `at`, round the end."""
    return Target((at.hunk + step) % count if count else 0)


def hunk_words(change: FileChange | None, at: Target, count: int, turn: int | None = None) -> str:
    """Where a comment goes now, for the screen's status line."""
    if change is None:
        return "No changes against the base." if turn is None else f"Turn {turn} changed nothing."
    if count == 0:
        return f"c comments on {change.path} (no lines to point at)"
    found = hunks(change)[at.hunk]
    if at.line is not None and at.line < len(found.lines):
        line = found.lines[at.line]
        gone = " (removed)" if line.kind == "removed" else ""
        quote = short_quote(line.text, 40) or "(empty line)"
        return f"hunk {at.hunk + 1}/{count} · line {number(line)}{gone} · {quote}"
    lines = f"{found.first}" if found.first == found.last else f"{found.first}-{found.last}"
    return f"hunk {at.hunk + 1}/{count} · line {lines} · {short_quote(found.quote, 40)}"


def comment_on(
    change: FileChange, at: Target | None, text: str, turn: int | None = None
) -> ReviewComment:
    """A comment on what `at` points at in `change`: one changed line, a whole hunk, or
    (None, or no hunk there) the whole file. `turn`: the view it was made in."""
    found = hunks(change)
    if at is None or not 0 <= at.hunk < len(found):
        return ReviewComment(change.path, None, None, text, turn=turn)
    hunk = found[at.hunk]
    if at.line is not None and 0 <= at.line < len(hunk.lines):
        line = hunk.lines[at.line]
        at_line = number(line)
        removed = line.kind == "removed"
        return ReviewComment(change.path, at_line, at_line, text, line.text, removed, turn=turn)
    return ReviewComment(change.path, hunk.first, hunk.last, text, hunk.quote, hunk=True, turn=turn)


def marks(
    change: FileChange, at: Target, comments: Iterable[ReviewComment], turn: int | None
) -> dict[DiffLine, str]:
    """The gutter marks of `change`'s diff: a comment's lines (made in this view) and the
    lines a comment would go on now."""
    found = hunks(change)
    marked: dict[DiffLine, str] = {}
    for comment in comments:
        if comment.path != change.path or comment.turn != turn or comment.first is None:
            continue
        for hunk in found:
            if comment.hunk:
                if (hunk.first, hunk.last) == (comment.first, comment.last):
                    marked.update((line, NOTED) for line in hunk.lines)
                continue
            marked.update(
                (line, NOTED)
                for line in hunk.lines
                if number(line) == comment.first and (line.kind == "removed") == comment.removed
            )
    if 0 <= at.hunk < len(found):
        hunk = found[at.hunk]
        chosen = hunk.lines if at.line is None else hunk.lines[at.line : at.line + 1]
        marked.update((line, CHOSEN) for line in chosen if line not in marked)
    return marked


def notes(path: str, comments: Iterable[ReviewComment], turn: int | None) -> list[str]:
    """The comments made on `path` in this view, one line each, to show under its diff."""
    found = []
    for comment in comments:
        if comment.path == path and comment.turn == turn:
            where = place(comment).removeprefix(path).removeprefix(":") or "the file"
            gone = " (removed)" if comment.removed else ""
            said = " ".join(comment.text.split())
            found.append(
                f"{NOTED} line {where}{gone}: {said}" if comment.first else f"{NOTED} {said}"
            )
    return found


def turns_of(checkpoints: Iterable[Checkpoint]) -> list[int]:
    """The turns that can be viewed on their own: those with a checkpoint at their start."""
    return sorted({c.turn for c in checkpoints if c.phase == "start"})


def step_view(turns: Sequence[int], turn: int | None, step: int) -> int | None:
    """The view `step` views on from `turn`: all changes (None), then each turn, round."""
    views: list[int | None] = [None, *turns]
    here = views.index(turn) if turn in views else 0
    return views[(here + step) % len(views)]


def view_words(turn: int | None, turns: Sequence[int]) -> str:
    """The view's name, under the screen's title."""
    if turn is None:
        shown = f" · t: each of its {len(turns)} turn(s)" if turns else ""
        return f"All changes against the base{shown}"
    return f"Turn {turn} ({turns.index(turn) + 1} of {len(turns)}) · t: next view"


def merge_question(branch: str, plan: MergeResult) -> str:
    """What the merge's confirmation asks, from its dry run."""
    how = "fast-forwarding it" if plan.how == "fast-forward" else "with a merge commit"
    return f"Merge {branch} into {plan.target} in your checkout, {how}?"


def merge_words(result: MergeResult) -> str:
    """What a merge did, or why not (a conflict names its files)."""
    if result.conflicts:
        return f"{result.refusal} Conflicts: {', '.join(result.conflicts)}"
    if result.refusal:
        return result.refusal
    return f"Merged into {result.target} ({result.how}): {result.commit[:12]}"
