"""`@path` mentions in a prompt: how they are written, found and completed. Pure text
rules, shared by the composer (completion) and the engine (which reads the files)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mention:
    """An `@path` token in a prompt: `text[start:end]` is the whole token (quotes included)."""

    start: int
    end: int
    path: str


MENTION_OPENERS = "([{<,;:!?*\"'`"
"""Besides whitespace and the start of the text, what may come right before a mention's `@`.
Not `.`, `-`, `_`, `+` or letters and digits, which precede the `@` of an e-mail address."""

_TRAILING = ".,;:!?'\"`"
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}

_MENTION = re.compile(
    r"(?<![^\s" + re.escape(MENTION_OPENERS) + r"])@(?:\"([^\"\n]+)\"|(?!\")(\S+))"
)


def find_mentions(text: str) -> list[Mention]:
    """The `@path` tokens in `text`, in order.

    A path runs to the next whitespace, minus trailing prose punctuation (`.,;:!?` quotes,
    and closing brackets that have no opening one in the path), or is quoted:
    `@"path with spaces"`. Only an `@` at the start or after whitespace or one of
    MENTION_OPENERS counts, so `name@example.com` is not a mention.
    """
    mentions: list[Mention] = []
    for found in _MENTION.finditer(text):
        if found.group(1) is not None:
            mentions.append(Mention(found.start(), found.end(), found.group(1)))
            continue
        path = _trim(found.group(2))
        if path:
            start = found.start()
            mentions.append(Mention(start, start + 1 + len(path), path))
    return mentions


def _trim(path: str) -> str:
    """`path` without the punctuation that ends the sentence around it."""
    while path:
        last = path[-1]
        unbalanced = last in _CLOSERS and path.count(last) > path.count(_CLOSERS[last])
        if last not in _TRAILING and not unbalanced:
            break
        path = path[:-1]
    return path


def completion_query(text: str, cursor: int) -> Mention | None:
    """The mention being typed at `cursor` (`path` is what is typed so far, possibly empty),
    or None when the cursor is not inside an `@` token: what the prompt box completes."""
    before = text[:cursor]
    at = before.rfind("@")
    while at >= 0:
        if at == 0 or before[at - 1].isspace() or before[at - 1] in MENTION_OPENERS:
            break
        at = before.rfind("@", 0, at)
    if at < 0:
        return None
    typed = before[at + 1 :]
    if typed.startswith('"'):
        if '"' in typed[1:] or "\n" in typed:
            return None
        return Mention(at, cursor, typed[1:])
    if any(c.isspace() for c in typed):
        return None
    return Mention(at, cursor, typed)


def format_mention(path: str) -> str:
    """The text that mentions `path`: `@path`, quoted when it holds whitespace or would lose
    trailing punctuation."""
    if any(c.isspace() for c in path) or _trim(path) != path or path.startswith('"'):
        return f'@"{path}"'
    return f"@{path}"
