"""How well a typed query matches a palette entry: the words a person types first.

A word typed is usually the start of a word they can see ("theme", "ren", "demo"), so a
query whose words begin words of the entry ranks above one whose letters are only found
scattered through it: "theme" ranks "Change theme" above "New session with Cockpit demo
agent" (t, h, e, m, e, picked out of four words). Pure: no widgets, no app."""

from __future__ import annotations

import re
from typing import NamedTuple

from textual.fuzzy import FuzzySearch

_WORD = re.compile(r"\w+")
_FUZZY = FuzzySearch()

FIRST_WORD = 3.0
"""Every typed word begins a word of the entry, the first typed one its first word."""
WORDS = 2.0
"""Every typed word begins a word of the entry, in any order."""
INSIDE = 1.0
"""The query as typed, found inside the entry (but not at a word's start)."""
SCATTERED = 0.0
"""The query's letters in order, scattered through the entry."""


class Ranked(NamedTuple):
    """A query against an entry: how well it matches (0 when it does not: higher is
    better, one tier above another whatever their details) and the characters of the
    entry it matched, to highlight."""

    score: float
    offsets: tuple[int, ...]


NO_MATCH = Ranked(0.0, ())


def rank(query: str, entry: str) -> Ranked:
    """How well `query` matches `entry`, ignoring case. The tier (`FIRST_WORD`, `WORDS`,
    `INSIDE`, `SCATTERED`) is the whole part of the score; within one, more words typed
    in full and a shorter entry rank higher (the fraction)."""
    typed = _WORD.findall(query.lower())
    words = [(found.start(), found.group()) for found in _WORD.finditer(entry.lower())]
    if typed and words:
        begun = _words_begun(typed, words)
        if begun is not None:
            first = words[0][1].startswith(typed[0])
            whole = sum(word in {w for _, w in words} for word in typed) / len(typed)
            return Ranked((FIRST_WORD if first else WORDS) + _within(whole, len(entry)), begun)
    needle = query.strip().lower()
    if not needle:
        return NO_MATCH
    where = entry.lower().find(needle)
    if where >= 0:
        return Ranked(INSIDE + _within(0.0, len(entry)), tuple(range(where, where + len(needle))))
    score, offsets = _FUZZY.match(needle, entry)
    if not score:
        return NO_MATCH
    return Ranked(SCATTERED + _within(score / (score + 1), len(entry)), tuple(offsets))


def _words_begun(typed: list[str], words: list[tuple[int, str]]) -> tuple[int, ...] | None:
    """The offsets of the start of each entry word a typed word begins (each typed word
    its own entry word, the first typed word the first entry word it can), or None when
    one typed word begins none."""
    offsets: list[int] = []
    taken: set[int] = set()
    for word in typed:
        found = next(
            (
                (index, start)
                for index, (start, candidate) in enumerate(words)
                if index not in taken and candidate.startswith(word)
            ),
            None,
        )
        if found is None:
            return None
        index, start = found
        taken.add(index)
        offsets.extend(range(start, start + len(word)))
    return tuple(sorted(offsets))


def _within(quality: float, length: int) -> float:
    """The place within a tier, in [0, 1): a better `quality` (0 to 1) and a shorter
    entry place higher, the quality weighing most."""
    return 0.9 * quality + 0.09 / (1 + length)
