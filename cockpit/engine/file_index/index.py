"""`FileIndex`: the files under a root, as sorted relative paths, with a fast fuzzy search.

It ranks by the rules of `cockpit.engine.file_index.fuzzy`. Speed (50,000 paths, a keystroke
well under 50 ms): one regex pass over all lowered paths joined by NUL keeps the paths holding
the query in order; tiers are found by passes over the joined file names; candidates are scored
tier by tier, shortest first, and the search stops when an upper bound of what is left cannot
beat the current `limit`-th result. The ranking is then exactly the exhaustive one
(`naive_search`), except that at most MAX_SCORED candidates are scored: past that, the shortest
ones of the tier reached win (seen only for queries whose characters are scattered over the
folders of most paths, like `src` or `pkgsrc`).
"""

from __future__ import annotations

import asyncio
import heapq
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cockpit.engine.file_index.fuzzy import (
    BONUS_BASENAME,
    BONUS_SEGMENT,
    BONUS_WORD,
    GAP_START,
    LENGTH_PENALTY,
    MATCH,
    MAX_CHAR_SCORE,
    TIER_EXACT,
    TIER_NAME,
    TIER_PATH,
    TIER_PREFIX,
    TIER_RUN,
    TIER_WEIGHT,
    is_upper,
    lower,
    lowered_tier,
    query_needle,
    score,
    subsequence_body,
    tier_of,
)
from cockpit.engine.file_index.listing import MAX_FILES, git_files, git_listing, walk

MAX_SCORED = 2000
"""Most candidates one search scores exactly (about 15 ms). Pruning usually stops far sooner;
past this the search is no longer exhaustive (the shortest paths of the tier reached are the
ones ranked): seen when thousands of paths hold the query only scattered (`src`, `pkgsrc`)."""

SMALL_SURVIVORS = 2000
"""Up to this many surviving paths, tiers are found per path instead of by bulk passes."""

_NUL = "\0"


@dataclass(frozen=True, slots=True)
class Match:
    """One search result: `positions` are the matched character offsets in `path`, for
    highlighting; a higher `score` is a better match."""

    path: str
    score: float
    positions: tuple[int, ...]


class FileIndex:
    """The files under a root, as sorted relative POSIX paths, with a fast fuzzy search.

    Build it with `await FileIndex.build(root)` (git when the root is in a work tree, a walk
    otherwise) or `FileIndex.from_paths` (tests, benchmarks). `truncated` says the tree held
    more than `MAX_FILES` files and the index was cut.
    """

    def __init__(
        self,
        root: Path,
        paths: Iterable[str],
        *,
        truncated: bool = False,
        source: Literal["git", "walk", "given"] = "given",
    ) -> None:
        self.root = root
        # A NUL cannot be in a real path, and would split the joined search tables.
        self.paths: tuple[str, ...] = tuple(sorted({p for p in paths if _NUL not in p}))
        self.truncated = truncated
        self.source = source
        # Search tables, in (length, path) order so that survivors come out shortest first.
        order = sorted(self.paths, key=len)  # stable: (length, path) order
        self._by_length: list[str] = order
        self._lowered: list[str] = [lower(p) for p in order]
        self._names: list[str] = [p.rpartition("/")[2] for p in order]
        self._all_lowered = _NUL + _NUL.join(self._lowered) + _NUL
        self._lowered_names: list[str] = [lower(n) for n in self._names]
        self._all_lowered_names = _NUL + _NUL.join(self._lowered_names) + _NUL
        self._path_at: dict[int, int] = {}
        self._name_starts: list[int] = []
        offset = 0
        for i, path in enumerate(order):
            self._path_at[offset] = i
            offset += len(path) + 1
        offset = 0
        for name in self._names:
            self._name_starts.append(offset)
            offset += len(name) + 1
        self._name_at = dict(zip(self._name_starts, range(len(order)), strict=True))
        self._shallow: list[str] | None = None
        self._last: tuple[str, list[int]] | None = None

    @classmethod
    def from_paths(cls, root: Path, paths: Iterable[str]) -> FileIndex:
        """An index over given relative paths (nothing is read from disk)."""
        return cls(root, paths)

    @classmethod
    async def build(cls, root: Path, *, cap: int = MAX_FILES, git: bool = True) -> FileIndex:
        """The files under `root`: `git ls-files` inside a work tree (so every .gitignore,
        `.git/info/exclude` and the global excludes apply), else a walk of the tree (always
        with `git=False`: the benchmark times both)."""
        listing = await git_listing(root) if git else None
        if listing is not None:
            paths, truncated = await asyncio.to_thread(git_files, root, listing, cap)
            return await asyncio.to_thread(cls, root, paths, truncated=truncated, source="git")
        paths, truncated = await asyncio.to_thread(walk, root, cap)
        return await asyncio.to_thread(cls, root, paths, truncated=truncated, source="walk")

    def __len__(self) -> int:
        return len(self.paths)

    # -- search -------------------------------------------------------------------------------

    def search(self, query: str, limit: int = 20) -> list[Match]:
        """The best `limit` paths for `query`, best first (see the module docstring for the
        rules). An empty query lists the shallowest paths first.

        Synchronous and CPU-bound (tens of milliseconds on 50,000 paths): a caller that must
        not stall its event loop runs it in a worker thread.
        """
        if limit <= 0:
            return []
        query = query.replace(_NUL, "").removeprefix("./")
        if not query:
            return [Match(path, 0.0, ()) for path in self._shallowest(limit)]
        survivors = self._survivors(query)
        if not survivors:
            return []
        return self._rank(query, survivors, limit)

    def naive_search(self, query: str, limit: int = 20) -> list[Match]:
        """The same ranking without any prefilter or pruning: every path is scored (the
        benchmark's baseline, and a test oracle)."""
        if limit <= 0:
            return []
        query = query.replace(_NUL, "").removeprefix("./")
        if not query:
            return [Match(path, 0.0, ()) for path in self._shallowest(limit)]
        case = [is_upper(c) for c in query]
        needle = query_needle(query, case)
        tail = query.rpartition("/")[2]
        results: list[Match] = []
        for path, low, name in zip(self._by_length, self._lowered, self._names, strict=True):
            scored = score(path, low, needle, case)
            if scored is None:
                continue
            tier = tier_of(name, tail)
            total = tier * TIER_WEIGHT + scored[0] - LENGTH_PENALTY * len(path)
            results.append(Match(path, total, scored[1]))
        return heapq.nsmallest(limit, results, key=_rank_key)

    def forget(self) -> None:
        """Drop the survivors kept from the last query, so the next search starts cold (the
        benchmark times both)."""
        self._last = None

    def _shallowest(self, limit: int) -> list[str]:
        if self._shallow is None:
            self._shallow = sorted(self.paths, key=lambda p: (p.count("/"), p))
        return self._shallow[:limit]

    def _survivors(self, query: str) -> list[int]:
        """Indices (in length order) of the paths holding the query's characters in order.

        One regex pass over all paths joined by NUL (C speed). While the user types on, the
        next query usually extends the last one, and its survivors are a subset of the last
        survivors: when those are few, only they are re-checked.
        """
        needle = lower(query)
        body = subsequence_body(needle)
        last = self._last
        if last is not None and needle.startswith(last[0]) and len(last[1]) <= 4096:
            record = re.compile(body)
            lowered = self._lowered
            survivors = [i for i in last[1] if record.match(lowered[i])]
        else:
            path_at = self._path_at
            regex = re.compile(_NUL + body)
            survivors = [path_at[m.start()] for m in regex.finditer(self._all_lowered)]
        self._last = (needle, survivors)
        return survivors

    def _tiers(
        self, survivors: list[int], tail: str, smart: bool
    ) -> list[tuple[int, Callable[[], list[int]]]]:
        """The candidates tier by tier, best first, each list shortest first. Lists are made
        on demand, since the search usually stops after the first tier or two.

        With few survivors each one's file name is classified directly. With many, a tier is
        one regex or `find` pass over all lowered file names joined by NUL; those lists are
        nested (a prefix is also a run...), may name non-survivors and, under smart case,
        over-approximate: `_rank` skips what it has taken, what did not survive and what
        belongs to a lower tier (it will meet it again there).
        """
        if not tail:
            return [(TIER_PATH, _given(survivors))]
        needle = lower(tail)
        ordered_body = subsequence_body(needle)
        tiers = (TIER_EXACT, TIER_PREFIX, TIER_RUN, TIER_NAME, TIER_PATH)
        if len(survivors) <= SMALL_SURVIVORS:
            buckets: list[list[int]] = [[] for _ in range(TIER_EXACT + 1)]
            if smart:
                names = self._names
                for i in survivors:
                    buckets[tier_of(names[i], tail)].append(i)
            else:
                in_order = re.compile(ordered_body)
                low_names = self._lowered_names
                for i in survivors:
                    buckets[lowered_tier(low_names[i], needle, in_order)].append(i)
            return [(tier, _given(buckets[tier])) for tier in tiers]
        joined, name_at, low_names = self._all_lowered_names, self._name_at, self._lowered_names
        size = len(needle)
        prefixed: list[list[int]] = []

        def prefix() -> list[int]:
            if not prefixed:
                starting = re.compile(_NUL + re.escape(needle))
                prefixed.append([name_at[m.start()] for m in starting.finditer(joined)])
            return prefixed[0]

        def exact() -> list[int]:
            return [i for i in prefix() if len(low_names[i]) == size or low_names[i][size] == "."]

        def run() -> list[int]:
            if size == 1:
                return ordered()
            starts, count = self._name_starts, len(self._name_starts)
            found: list[int] = []
            at = joined.find(needle)
            while at >= 0:
                i = bisect_right(starts, at) - 1
                found.append(i)
                at = joined.find(needle, starts[i + 1] if i + 1 < count else len(joined))
            return found

        def ordered() -> list[int]:
            regex = re.compile(_NUL + ordered_body)
            return [name_at[m.start()] for m in regex.finditer(joined)]

        return list(zip(tiers, (exact, prefix, run, ordered, _given(survivors)), strict=True))

    def _rank(self, query: str, survivors: list[int], limit: int) -> list[Match]:
        """Score candidates tier by tier, each shortest first, stopping once no remaining one
        can beat the current `limit`-th best (or after MAX_SCORED scorings)."""
        case = [is_upper(c) for c in query]
        smart = any(case)
        needle = query_needle(query, case)
        head, slash, tail = query.rpartition("/")
        head_size = len(head) + len(slash)
        by_length, lowered, names = self._by_length, self._lowered, self._names
        low_names = self._lowered_names
        tail_chars = set(lower(tail))
        survivor_set = set(survivors)
        taken: set[int] = set()
        results: list[Match] = []
        kept: list[float] = []  # min-heap of the best `limit` scores so far
        budget = MAX_SCORED
        for tier, make_members in self._tiers(survivors, tail, smart):
            base = tier * TIER_WEIGHT
            best_possible = base + _ceiling(tier, head_size, len(tail), True)
            if len(kept) >= limit and best_possible <= kept[0]:
                break  # tiers dominate: nothing below can enter the result
            members = make_members()
            no_name_start = base + _ceiling(tier, head_size, len(tail), False)
            for i in members:
                if i in taken or i not in survivor_set:
                    continue
                path = by_length[i]
                if len(kept) >= limit:
                    penalty = LENGTH_PENALTY * len(path)
                    if best_possible - penalty <= kept[0]:
                        break  # members come shortest first: no later one can do better
                    if no_name_start - penalty <= kept[0] and low_names[i][:1] not in tail_chars:
                        taken.add(i)
                        continue
                if smart and tier_of(names[i], tail) != tier:
                    continue  # its case-exact tier is lower: it comes round again there
                taken.add(i)
                budget -= 1
                scored = score(path, lowered[i], needle, case)
                if scored is not None:
                    total = base + scored[0] - LENGTH_PENALTY * len(path)
                    results.append(Match(path, total, scored[1]))
                    if len(kept) < limit:
                        heapq.heappush(kept, total)
                    elif total > kept[0]:
                        heapq.heapreplace(kept, total)
                if budget <= 0:
                    return heapq.nsmallest(limit, results, key=_rank_key)
        return heapq.nsmallest(limit, results, key=_rank_key)


def _ceiling(tier: int, head: int, tail: int, name_start: bool) -> float:
    """The most `score` can give a match in `tier`, for a query of `head` characters up to
    its last `/` and `tail` after it; `name_start` False when the file name's first character
    is none of the tail's, so that no tail character can sit at a segment start.

    The head lies in folders (no file-name bonus: 26 a character at most). Below the prefix
    tier the tail is not one run from the name's start, so either no tail character is at a
    segment start (a word start at best: 30 each), or there is a gap and a later run (-5
    from the best), or a character outside the name (-6).
    """
    folder_char = MATCH + BONUS_SEGMENT
    word_char = MATCH + BONUS_WORD + BONUS_BASENAME
    ceiling = folder_char * head
    if tail == 0:
        return ceiling
    if not name_start:
        if tier == TIER_PATH:
            return ceiling + word_char * (tail - 1) + folder_char
        return ceiling + word_char * tail + (GAP_START if tier == TIER_NAME else 0.0)
    if tier >= TIER_PREFIX:
        return ceiling + MAX_CHAR_SCORE * tail
    outside = MAX_CHAR_SCORE * (tail - 1) + folder_char
    gapped = MAX_CHAR_SCORE * (tail - 1) + word_char + GAP_START
    if tier == TIER_RUN:
        return ceiling + max(word_char * tail, gapped, outside)
    if tier == TIER_NAME:
        return ceiling + max(word_char * tail + GAP_START, gapped, outside)
    return ceiling + outside


def _given(members: list[int]) -> Callable[[], list[int]]:
    """A ready list, in the shape of a tier made on demand."""
    return lambda: members


def _rank_key(match: Match) -> tuple[float, int, str]:
    """Best score first, then the shorter path, then alphabetical: a total, stable order."""
    return (-match.score, len(match.path), match.path)
