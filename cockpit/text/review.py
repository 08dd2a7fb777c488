"""Review comments on a worktree session's changes, gathered into one prompt for its
agent: each names its file and line (or a hunk's lines) and quotes the line, so the agent
knows what is meant without the screen the user read it on."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cockpit.text.sanitize import printable

QUOTE_LENGTH = 60
"""The most characters of a commented line quoted in the prompt."""

HEAD = "review:"


@dataclass(frozen=True)
class ReviewComment:
    """A comment on a line (`first` == `last`), a hunk's lines, or a whole file (no line)."""

    path: str
    first: int | None
    last: int | None
    text: str
    quote: str = ""
    """The line commented on (the hunk's first changed line), as the diff shows it."""
    removed: bool = False
    """The line is one the change removed: its number is in the file as it was."""
    hunk: bool = False
    """It is on a whole hunk (`first`-`last` are its lines), not on one of its lines."""
    turn: int | None = None
    """The turn whose diff it was made on (None: the whole work against the base), so the
    agent knows which state of the file a line number means."""


def place(comment: ReviewComment) -> str:
    """Where a comment points: `path`, `path:12` or `path:12-18`."""
    if comment.first is None:
        return comment.path
    if comment.last is None or comment.last == comment.first:
        return f"{comment.path}:{comment.first}"
    return f"{comment.path}:{comment.first}-{comment.last}"


def remark(comment: ReviewComment) -> str:
    """What a place needs said beside it: ` (removed line, turn 2)`, or nothing."""
    notes = ["removed line"] if comment.removed else []
    notes += [f"turn {comment.turn}"] if comment.turn is not None else []
    return f" ({', '.join(notes)})" if notes else ""


def short_quote(line: str, length: int = QUOTE_LENGTH) -> str:
    """A line as quoted: on one line, its indent dropped, cut to `length` with an ellipsis."""
    words = " ".join(printable(line).split())
    return words if len(words) <= length else words[: length - 1].rstrip() + "…"


def review_prompt(comments: Iterable[ReviewComment]) -> str:
    """One prompt holding every comment with text, in the order given ("" when none has
    any): `review:` then a `- path:line: comment` line each, the quoted line under it.
    A removed line, or a comment made on one turn's diff, says so after its place."""
    lines = []
    for comment in comments:
        text = comment.text.strip()
        if not text:
            continue
        said = " ".join(text.splitlines())
        lines.append(f"- {place(comment)}{remark(comment)}: {said}")
        quote = short_quote(comment.quote)
        if quote:
            lines.append(f"  > {quote}")
    return "\n".join([HEAD, *lines]) if lines else ""
