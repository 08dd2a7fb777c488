"""How many lines a change adds and removes: what `cockpit changes` lists per file and a
race compares per contender."""

from __future__ import annotations

import difflib


def line_counts(old: str | None, new: str | None) -> tuple[int, int]:
    """Lines added and removed from `old` to `new` (None: no file)."""
    before, after = (old or "").splitlines(), (new or "").splitlines()
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed
