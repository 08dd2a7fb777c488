"""Which word the composer completes: a `/command` at the very start of the prompt, or an
`@path` anywhere. Pure, so that it is tested without an app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cockpit.text.mentions import completion_query, find_mentions


@dataclass(frozen=True)
class CompletionToken:
    """The word being completed: `/command` at the very start, or an `@path` anywhere."""

    trigger: str
    query: str
    start: int
    end: int


def completion_token(text: str, cursor: int) -> CompletionToken | None:
    """The token under the cursor that completion should work on, if any.

    A slash command is only the first word of the prompt; a mention is what
    `cockpit.text.mentions` reads as one (so an e-mail address is not one, a quoted path is).
    """
    start = cursor
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = cursor
    while end < len(text) and not text[end].isspace():
        end += 1
    word = text[start:end]
    if word.startswith("/") and start == 0 and "\n" not in text[:cursor]:
        return CompletionToken("/", word[1 : cursor - start], start, end)
    mention = completion_query(text, cursor)
    if mention is None:
        return None
    # The token ends where the mention under the cursor ends (a closing bracket, comma or
    # quote after it stays), or at the cursor while it is still being typed.
    whole = [m.end for m in find_mentions(text) if m.start == mention.start]
    return CompletionToken("@", mention.path, mention.start, max([*whole, cursor]))


def offset_of(lines: Sequence[str], row: int, column: int) -> int:
    """The character offset of (row, column) in text made of `lines` joined by newlines."""
    return sum(len(line) + 1 for line in lines[:row]) + column
