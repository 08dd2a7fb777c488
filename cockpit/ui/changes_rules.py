"""The rules of the changes screen, without a screen: a changed file's line in the list,
its hunks (what a comment can point at), a comment on one, the plan a merge asks about,
and what a merge's result says. ("Per turn" is the checkpoints' view: this is the whole
of a session's work against its base.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.api import ChangedFile, MergeResult
from cockpit.text.review import ReviewComment, short_quote
from cockpit.ui.diffs.model import DiffLine, count_changes, diff_lines

MARKS = {"added": "A", "modified": "M", "deleted": "D"}

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


def file_line(change: ChangedFile, comments: int = 0) -> str:
    """A changed file in the list: its mark, its path, its counts (or why no diff)."""
    mark = MARKS.get(change.status, "?")
    if not change.readable:
        counts = "binary" if change.binary else "too large"
    else:
        added, removed = count_changes(diff_lines(change.old_text, change.new_text or ""))
        counts = f"+{added} -{removed}"
    noted = f"  ✎{comments}" if comments else ""
    return f"{mark} {change.path}  {counts}{noted}"


def hunks(change: ChangedFile) -> list[Hunk]:
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
    return Hunk(min(numbers), max(numbers), added[0] if added else run[0].text)


def hunk_words(change: ChangedFile | None, index: int, count: int) -> str:
    """Where a comment goes now, for the screen's status line."""
    if change is None:
        return "No changes against the base."
    if count == 0:
        return f"c comments on {change.path} (no lines to point at)"
    found = hunks(change)[index]
    lines = f"{found.first}" if found.first == found.last else f"{found.first}-{found.last}"
    return f"hunk {index + 1}/{count} · line {lines} · {short_quote(found.quote, 40)}"


def comment_on(change: ChangedFile, index: int | None, text: str) -> ReviewComment:
    """A comment on hunk `index` of `change` (None or no hunk: the whole file)."""
    found = hunks(change)
    if index is None or not 0 <= index < len(found):
        return ReviewComment(change.path, None, None, text)
    hunk = found[index]
    return ReviewComment(change.path, hunk.first, hunk.last, text, hunk.quote)


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
