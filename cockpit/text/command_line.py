"""A command's argv as a person reads it. `shlex.join` is exact but hard to read: it wraps
every word that holds a quote in `'"'"'`. This keeps words bare where they can be, and
quotes the others in the lightest style that still reads back as the same argv."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

BARE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)
"""A word the shell reads as itself (the characters `shlex.quote` leaves alone)."""

SPECIAL_IN_DOUBLE_QUOTES = frozenset('"$`\\!')
"""What a shell still acts on inside double quotes (`!` in an interactive bash)."""


def readable_word(word: str) -> str:
    """One word: bare when it needs no quoting, else in single quotes, else in double
    quotes when it holds a single quote and nothing double quotes would change."""
    if BARE.fullmatch(word):
        return word
    if "'" not in word:
        return f"'{word}'"
    if not SPECIAL_IN_DOUBLE_QUOTES.intersection(word):
        return f'"{word}"'
    return shlex.quote(word)


def readable_command(argv: Iterable[str]) -> str:
    """The argv joined as a shell line a person reads easily; `shlex.split` of it gives
    the argv back."""
    return " ".join(readable_word(word) for word in argv)
