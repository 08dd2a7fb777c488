"""How well one path matches an `@` query: the matching rule, the tiers and the score.

Matching rule (smart case, per character): a lowercase query character matches either
case, an uppercase one only itself, so `btn` finds `Button.tsx` and `Btn` does not find
`subtitle_btn.py`. Every query character must appear in the path in order.

Ranking: a match is placed in a tier first, from the query's last `/`-separated part against
the file name: the file name's stem (or whole name) equals it, the name starts with it, the name
contains it as one run, the name contains its characters in order, or only the whole path does.
Within a tier an additive score (in the spirit of fzf) favours word starts (after `/`, `_`, `-`,
`.`, a space or at a camelCase hump), consecutive runs, characters inside the file name, few and
short gaps, and short paths. Tiers dominate, so "file-name match beats folder match" and
"consecutive beats scattered" hold by construction.

Pure functions over strings; `cockpit.engine.file_index.index` applies them to many paths
at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Score constants. A match scores MATCH per character plus its bonuses, minus gaps and length.
MATCH = 16.0
BONUS_SEGMENT = 10.0  # first character of the path or of a folder/file name (after `/`)
BONUS_WORD = 8.0  # after `_`, `-`, `.`, a space or other punctuation
BONUS_CAMEL = 7.0  # an uppercase letter after a lowercase one, or a digit after a letter
BONUS_CONSECUTIVE = 4.0  # least bonus of a character right after the previous match
BONUS_BASENAME = 6.0  # the character lies in the file name, not in a folder
GAP_START = -3.0
GAP_EXTENSION = -1.0
LENGTH_PENALTY = 0.25  # per character of the path: shorter paths first among equals
MAX_CHAR_SCORE = MATCH + BONUS_SEGMENT + BONUS_BASENAME
TIER_WEIGHT = 10_000.0
"""Tiers dominate the additive score (which stays below this for any sane query)."""

TIER_EXACT, TIER_PREFIX, TIER_RUN, TIER_NAME, TIER_PATH = 4, 3, 2, 1, 0


def lower(text: str) -> str:
    """`text` lowercased character by character, so offsets agree with the original (no
    final-sigma context, no character that lowers to two)."""
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def is_upper(c: str) -> bool:
    """A query character that matches only itself (smart case)."""
    return c != c.lower()


def score(
    path: str, low: str, needle: str, case: Sequence[bool]
) -> tuple[float, tuple[int, ...]] | None:
    """The best alignment of `needle` in `path`: (score, positions), or None if it does not
    match. `case[i]` says needle[i] is matched case-sensitively (against `path`, else against
    `low`, the lowered path). The score excludes the tier and the length penalty.

    A dynamic programme over each query character's occurrences between its earliest and
    latest feasible offsets. A gap's cost is linear in its length, so the best predecessor
    across a gap is a running maximum: each layer costs the occurrences of two characters.
    """
    n = len(needle)
    targets = [path if sensitive else low for sensitive in case]
    first = [0] * n
    p = -1
    for i in range(n):
        p = targets[i].find(needle[i], p + 1)
        if p < 0:
            return None
        first[i] = p
    last = [0] * n
    p = len(path)
    for i in range(n - 1, -1, -1):
        p = targets[i].rfind(needle[i], 0, p)
        last[i] = p
    name_start = path.rfind("/") + 1
    segment, word, camel = BONUS_SEGMENT, BONUS_WORD, BONUS_CAMEL
    match, in_name, consecutive = MATCH, MATCH + BONUS_BASENAME, BONUS_CONSECUTIVE
    gap_start, gap_extension = GAP_START, GAP_EXTENSION
    minus_infinity = float("-inf")
    layers: list[tuple[list[int], list[int]]] = []  # (positions, link to previous layer)
    prev_pos: list[int] = []
    prev_score: list[float] = []
    prev_run: list[float] = []
    for i in range(n):
        target, c, hi = targets[i], needle[i], last[i]
        positions: list[int] = []
        scores: list[float] = []
        runs: list[float] = []
        links: list[int] = []
        size = len(prev_pos)
        k = 0
        best_gap, best_gap_at = minus_infinity, -1
        p = first[i]
        while 0 <= p <= hi:
            if p == 0:
                bonus = segment
            else:
                before = path[p - 1]
                if before == "/":
                    bonus = segment
                elif not before.isalnum():
                    bonus = word
                else:
                    here = path[p]
                    if (here.isupper() and before.islower()) or (
                        here.isdigit() and not before.isdigit()
                    ):
                        bonus = camel
                    else:
                        bonus = 0.0
            base = in_name if p >= name_start else match
            if i == 0:
                positions.append(p)
                scores.append(base + bonus)
                runs.append(bonus)
                links.append(-1)
            else:
                while k < size and prev_pos[k] < p - 1:
                    value = prev_score[k] - gap_extension * prev_pos[k]
                    if value > best_gap:
                        best_gap, best_gap_at = value, k
                    k += 1
                candidate, run, link = minus_infinity, bonus, -1
                if best_gap_at >= 0:
                    candidate = best_gap + gap_extension * (p - 2) + gap_start + bonus
                    link = best_gap_at
                if k < size and prev_pos[k] == p - 1:
                    inherited = prev_run[k] if prev_run[k] > bonus else bonus
                    value = prev_score[k] + (inherited if inherited > consecutive else consecutive)
                    if value >= candidate:
                        candidate, run, link = value, inherited, k
                if link >= 0:
                    positions.append(p)
                    scores.append(candidate + base)
                    runs.append(run)
                    links.append(link)
            p = target.find(c, p + 1)
        if not positions:
            return None
        layers.append((positions, links))
        prev_pos, prev_score, prev_run = positions, scores, runs
    best = 0
    for j in range(1, len(prev_score)):
        if prev_score[j] >= prev_score[best]:
            best = j
    total = prev_score[best]
    chosen = [0] * n
    for i in range(n - 1, -1, -1):
        positions, links = layers[i]
        chosen[i] = positions[best]
        best = links[best]
    return total, tuple(chosen)


def query_needle(query: str, case: Sequence[bool]) -> str:
    """The query as `score` wants it: case-sensitive characters kept, the others lowered."""
    return "".join(c if sensitive else lower(c) for c, sensitive in zip(query, case, strict=True))


def subsequence_body(needle: str) -> str:
    """A regex for `needle`'s characters in order within one NUL-separated record. Possessive
    negated runs make it linear: each step jumps to the leftmost next occurrence, which is
    all a subsequence test needs, and never backtracks."""
    parts: list[str] = []
    for c in needle:
        escaped = re.escape(c)
        parts.append(f"[^\\x00{escaped}]*+{escaped}")
    return "".join(parts)


def lowered_tier(low_name: str, needle: str, ordered: re.Pattern[str]) -> int:
    """The tier of a lowered file name for a lowered query tail (no smart case)."""
    if low_name.startswith(needle):
        size = len(needle)
        return TIER_EXACT if len(low_name) == size or low_name[size] == "." else TIER_PREFIX
    if needle in low_name:
        return TIER_RUN
    return TIER_NAME if ordered.match(low_name) else TIER_PATH


def tier_of(name: str, tail: str) -> int:
    """The tier a file name puts a match in, checked character by character with the exact
    (smart-case) rule; the index finds the same tiers in bulk with regexes."""
    if not tail:
        return TIER_PATH
    case = [is_upper(c) for c in tail]
    needle = query_needle(tail, case)
    low = lower(name)
    n = len(needle)

    def run_at(start: int) -> bool:
        return start + n <= len(name) and all(
            (name if case[i] else low)[start + i] == needle[i] for i in range(n)
        )

    if run_at(0):
        return TIER_EXACT if len(name) == n or name[n] == "." else TIER_PREFIX
    if any(run_at(start) for start in range(1, len(name) - n + 1)):
        return TIER_RUN
    i = 0
    for k in range(len(name)):
        if i < n and (name if case[i] else low)[k] == needle[i]:
            i += 1
    return TIER_NAME if i == n else TIER_PATH
