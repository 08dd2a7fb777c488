"""`@` mentions in a prompt: the files under a session's root, fuzzy search over them, and the
ACP content blocks that carry a mentioned file to the agent.

Engine-side and UI-free (no Textual import): the prompt box asks `FileIndex.search` for
completions on every keystroke, and `mention_blocks` turns the finished prompt's mentions into
embedded resources (when the agent advertises `promptCapabilities.embeddedContext`) or links.

Search matching rule (smart case, per character): a lowercase query character matches either
case, an uppercase one only itself, so `btn` finds `Button.tsx` and `Btn` does not find
`subtitle_btn.py`. Every query character must appear in the path in order.

Ranking: a match is placed in a tier first, from the query's last `/`-separated part against
the file name: the file name's stem (or whole name) equals it, the name starts with it, the name
contains it as one run, the name contains its characters in order, or only the whole path does.
Within a tier an additive score (in the spirit of fzf) favours word starts (after `/`, `_`, `-`,
`.`, a space or at a camelCase hump), consecutive runs, characters inside the file name, few and
short gaps, and short paths. Tiers dominate, so "file-name match beats folder match" and
"consecutive beats scattered" hold by construction.

Speed (50,000 paths, a keystroke well under 50 ms): one regex pass over all lowered paths
joined by NUL keeps the paths holding the query in order; tiers are found by passes over the
joined file names; candidates are scored tier by tier, shortest first, and the search stops
when an upper bound of what is left cannot beat the current `limit`-th result. The ranking is
then exactly the exhaustive one (`naive_search`), except that at most MAX_SCORED candidates are
scored: past that, the shortest ones of the tier reached win (seen only for queries whose
characters are scattered over the folders of most paths, like `src` or `pkgsrc`).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import mimetypes
import os
import re
import stat
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from acp import embedded_text_resource, resource_block, resource_link_block

from cockpit.acp_types import ContentBlock
from cockpit.engine.files import OutsideRoot, confine
from cockpit.text.mentions import find_mentions

MAX_FILES = 200_000
"""Most paths an index holds; a bigger tree is cut (sorted order for git) and flagged."""

HEAVY_DIRS = frozenset(
    {"node_modules", ".venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
"""Folders skipped by the walk outside git: huge, generated, never what a user mentions."""

GIT_TIMEOUT = 30.0
"""Seconds `git ls-files` may take before the index falls back to walking the tree."""

MAX_EMBED_BYTES = 256 * 1024
"""Largest file embedded in a prompt by default; bigger ones are sent as links."""

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


# --------------------------------------------------------------------------------------------
# .gitignore rules (for trees outside git; inside git, git itself applies them)


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    anchored: bool


class IgnoreRules:
    """The patterns of one `.gitignore`, applying to paths under the folder it lives in.

    Implements the common rules: blank and `#` lines, `!` negation, a trailing `/` for folders
    only, a leading or inner `/` anchoring to the file's folder, `*`, `?`, `[...]`, and `**`
    (leading `**/`, inner `/**/`, trailing `/**`); a pattern without a slash matches a name
    at any depth. Within one file the last matching pattern wins.
    """

    def __init__(self, lines: Iterable[str], base: str = "") -> None:
        self.base = base.strip("/")
        self.rules: list[_Rule] = [rule for line in lines if (rule := _parse(line)) is not None]

    @classmethod
    def read(cls, path: Path, base: str = "") -> IgnoreRules:
        """The rules of the `.gitignore` at `path` (none if it cannot be read)."""
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        return cls(text.splitlines(), base)

    def match(self, path: str, is_dir: bool) -> bool | None:
        """True if `path` (relative to the root) is ignored, False if re-included by a `!`
        pattern, None if no pattern here speaks about it."""
        if self.base:
            if not path.startswith(self.base + "/"):
                return None
            relative = path[len(self.base) + 1 :]
        else:
            relative = path
        name = relative.rpartition("/")[2]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(relative if rule.anchored else name):
                return not rule.negate
        return None


def is_ignored(rules: Sequence[IgnoreRules], path: str, is_dir: bool) -> bool:
    """Whether `path` is ignored by `rules`, ordered from the root's `.gitignore` down: a
    deeper file's verdict overrides a shallower one, as in git."""
    for layer in reversed(rules):
        verdict = layer.match(path, is_dir)
        if verdict is not None:
            return verdict
    return False


def _parse(line: str) -> _Rule | None:
    """One `.gitignore` line as a rule, or None for blanks and comments."""
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/") if dir_only else line
    if not line:
        return None
    anchored = "/" in line
    line = line.removeprefix("/")
    if not line:
        return None
    return _Rule(re.compile(_glob_to_regex(line), re.DOTALL), negate, dir_only, anchored)


def _glob_to_regex(pattern: str) -> str:
    """A gitignore glob as a regex matching a whole relative path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        if (
            pattern.startswith("**", i)
            and at_segment_start
            and (i + 2 == n or pattern[i + 2] == "/")
        ):
            if i + 2 == n:
                out.append(".*")  # trailing `**`: everything inside
                i += 2
            else:
                out.append("(?:.*/)?")  # `**/`: zero or more folders
                i += 3
        elif c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end, klass = _bracket(pattern, i)
            if klass is None:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(klass)
                i = end
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _bracket(pattern: str, start: int) -> tuple[int, str | None]:
    """The regex class for the `[...]` at `start` and the index after it (None if unclosed)."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = True
    while i < len(pattern):
        c = pattern[i]
        if c == "]" and not first:
            klass = "".join(body)
            return i + 1, f"[^/{klass}]" if negate else f"(?!/)[{klass}]"
        if c == "\\" and i + 1 < len(pattern):
            body.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            body.append(c if c == "-" else re.escape(c))
            i += 1
        first = False
    return start + 1, None


# --------------------------------------------------------------------------------------------
# Building the index


def _inside(real_root: str, real: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _walk(root: Path, cap: int) -> tuple[list[str], bool]:
    """Files under `root` (not following symlinked folders), honouring `.gitignore` files and
    skipping `.git` and the heavy folders; (paths, truncated)."""
    real_root = os.path.realpath(root)
    found: list[str] = []
    stack: list[tuple[str, str, list[IgnoreRules]]] = [(str(root), "", [])]
    while stack:
        folder, prefix, rules = stack.pop()
        ignore_file = os.path.join(folder, ".gitignore")
        if os.path.isfile(ignore_file):
            rules = [*rules, IgnoreRules.read(Path(ignore_file), prefix.rstrip("/"))]
        try:
            with os.scandir(folder) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            name = entry.name
            if name == ".git":
                continue
            relative = prefix + name
            try:
                if entry.is_symlink():
                    # A link counts as a file when it resolves to a file inside the root;
                    # linked folders are never entered (no loops, no escaping the root).
                    real = os.path.realpath(entry.path)
                    if not (_inside(real_root, real) and os.path.isfile(real)):
                        continue
                    if is_ignored(rules, relative, False):
                        continue
                    found.append(relative)
                elif entry.is_dir(follow_symlinks=False):
                    if name in HEAVY_DIRS or is_ignored(rules, relative, True):
                        continue
                    stack.append((entry.path, relative + "/", rules))
                elif entry.is_file(follow_symlinks=False):
                    if is_ignored(rules, relative, False):
                        continue
                    found.append(relative)
            except OSError:
                continue
            if len(found) > cap:
                return found[:cap], True
    return found, False


@dataclass(frozen=True, slots=True)
class _GitListing:
    """What git says is under the root: tracked entries with their modes, untracked files
    that no ignore rule hides, and tracked files deleted from the work tree."""

    tracked: list[tuple[bytes, str]]
    untracked: list[str]
    deleted: set[str]


async def _git_listing(root: Path) -> _GitListing | None:
    """Git's view of `root`, or None when it is not in a work tree, git is missing, fails
    or takes too long. Three `git ls-files` run at once: the tracked entries' modes tell
    regular files from symlinks and submodules, and `--deleted` drops missing files, so
    only untracked paths and tracked symlinks need a look at the disk."""
    try:
        async with asyncio.timeout(GIT_TIMEOUT):
            staged, others, deleted = await asyncio.gather(
                _git(root, "--cached", "--stage"),
                _git(root, "--others", "--exclude-standard"),
                _git(root, "--deleted"),
            )
    except TimeoutError:
        return None
    if staged is None or others is None or deleted is None:
        return None
    tracked: list[tuple[bytes, str]] = []
    for record in staged.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        if tab:
            tracked.append((meta.partition(b" ")[0], os.fsdecode(path)))
    return _GitListing(
        tracked,
        [os.fsdecode(raw) for raw in others.split(b"\0") if raw and not raw.endswith(b"/")],
        {os.fsdecode(raw) for raw in deleted.split(b"\0") if raw},
    )


async def _git(root: Path, *options: str) -> bytes | None:
    """The output of `git ls-files -z OPTIONS` in `root`, or None if it cannot run or fails."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            "ls-files",
            "-z",
            *options,
            cwd=root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    try:
        output, _ = await process.communicate()
    except BaseException:  # cancelled (timeout): leave no git behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    return output if process.returncode == 0 else None


def _git_files(root: Path, listing: _GitListing, cap: int) -> tuple[list[str], bool]:
    """The files of a git listing that are files now: tracked regular files not deleted,
    tracked symlinks and untracked paths only when they are (or resolve to) a file inside
    the root, never submodules; (sorted paths, truncated)."""
    real_root = os.path.realpath(root)
    base = str(root)

    def inside_file(relative: str) -> bool:
        real = os.path.realpath(os.path.join(base, relative))
        return _inside(real_root, real) and os.path.isfile(real)

    found: set[str] = set()
    for mode, relative in listing.tracked:
        if relative in listing.deleted:
            continue
        if mode in (b"100644", b"100755") or (mode == b"120000" and inside_file(relative)):
            found.add(relative)
    for relative in listing.untracked:
        try:
            mode_bits = os.lstat(os.path.join(base, relative)).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode_bits) or (stat.S_ISLNK(mode_bits) and inside_file(relative)):
            found.add(relative)
    paths = sorted(found)
    return paths[:cap], len(paths) > cap


# --------------------------------------------------------------------------------------------
# Scoring


def _lower(text: str) -> str:
    """`text` lowercased character by character, so offsets agree with the original (no
    final-sigma context, no character that lowers to two)."""
    if text.isascii():
        return text.lower()
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def _is_upper(c: str) -> bool:
    """A query character that matches only itself (smart case)."""
    return c != c.lower()


def _score(
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


def _query_needle(query: str, case: Sequence[bool]) -> str:
    """The query as `_score` wants it: case-sensitive characters kept, the others lowered."""
    return "".join(c if sensitive else _lower(c) for c, sensitive in zip(query, case, strict=True))


def _subsequence_body(needle: str) -> str:
    """A regex for `needle`'s characters in order within one NUL-separated record. Possessive
    negated runs make it linear: each step jumps to the leftmost next occurrence, which is
    all a subsequence test needs, and never backtracks."""
    parts: list[str] = []
    for c in needle:
        escaped = re.escape(c)
        parts.append(f"[^\\x00{escaped}]*+{escaped}")
    return "".join(parts)


# --------------------------------------------------------------------------------------------
# The index


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
        self._lowered: list[str] = [_lower(p) for p in order]
        self._names: list[str] = [p.rpartition("/")[2] for p in order]
        self._all_lowered = _NUL + _NUL.join(self._lowered) + _NUL
        self._lowered_names: list[str] = [_lower(n) for n in self._names]
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
        listing = await _git_listing(root) if git else None
        if listing is not None:
            paths, truncated = await asyncio.to_thread(_git_files, root, listing, cap)
            return await asyncio.to_thread(cls, root, paths, truncated=truncated, source="git")
        paths, truncated = await asyncio.to_thread(_walk, root, cap)
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
        case = [_is_upper(c) for c in query]
        needle = _query_needle(query, case)
        tail = query.rpartition("/")[2]
        results: list[Match] = []
        for path, low, name in zip(self._by_length, self._lowered, self._names, strict=True):
            scored = _score(path, low, needle, case)
            if scored is None:
                continue
            tier = _tier_of(name, tail)
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
        needle = _lower(query)
        body = _subsequence_body(needle)
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
        needle = _lower(tail)
        ordered_body = _subsequence_body(needle)
        tiers = (TIER_EXACT, TIER_PREFIX, TIER_RUN, TIER_NAME, TIER_PATH)
        if len(survivors) <= SMALL_SURVIVORS:
            buckets: list[list[int]] = [[] for _ in range(TIER_EXACT + 1)]
            if smart:
                names = self._names
                for i in survivors:
                    buckets[_tier_of(names[i], tail)].append(i)
            else:
                in_order = re.compile(ordered_body)
                low_names = self._lowered_names
                for i in survivors:
                    buckets[_lowered_tier(low_names[i], needle, in_order)].append(i)
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
        case = [_is_upper(c) for c in query]
        smart = any(case)
        needle = _query_needle(query, case)
        head, slash, tail = query.rpartition("/")
        head_size = len(head) + len(slash)
        by_length, lowered, names = self._by_length, self._lowered, self._names
        low_names = self._lowered_names
        tail_chars = set(_lower(tail))
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
                if smart and _tier_of(names[i], tail) != tier:
                    continue  # its case-exact tier is lower: it comes round again there
                taken.add(i)
                budget -= 1
                scored = _score(path, lowered[i], needle, case)
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
    """The most `_score` can give a match in `tier`, for a query of `head` characters up to
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


def _lowered_tier(low_name: str, needle: str, ordered: re.Pattern[str]) -> int:
    """The tier of a lowered file name for a lowered query tail (no smart case)."""
    if low_name.startswith(needle):
        size = len(needle)
        return TIER_EXACT if len(low_name) == size or low_name[size] == "." else TIER_PREFIX
    if needle in low_name:
        return TIER_RUN
    return TIER_NAME if ordered.match(low_name) else TIER_PATH


def _given(members: list[int]) -> Callable[[], list[int]]:
    """A ready list, in the shape of a tier made on demand."""
    return lambda: members


def _rank_key(match: Match) -> tuple[float, int, str]:
    """Best score first, then the shorter path, then alphabetical: a total, stable order."""
    return (-match.score, len(match.path), match.path)


def _tier_of(name: str, tail: str) -> int:
    """The tier a file name puts a match in, checked character by character with the exact
    (smart-case) rule; the index finds the same tiers in bulk with regexes."""
    if not tail:
        return TIER_PATH
    case = [_is_upper(c) for c in tail]
    needle = _query_needle(tail, case)
    low = _lower(name)
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


# --------------------------------------------------------------------------------------------
# Content blocks for the mentioned files

BINARY_SNIFF = 8000
"""Bytes looked at for a NUL to call a file binary (git's heuristic)."""


def mention_blocks(
    text: str, root: Path, embedded: bool, max_bytes: int = MAX_EMBED_BYTES
) -> tuple[list[ContentBlock], list[str]]:
    """ACP blocks for the distinct files mentioned in `text`, and the problems met.

    A file inside `root` becomes an embedded text resource when `embedded` (the agent
    advertises `promptCapabilities.embeddedContext`), else a resource link. Too large (over
    `max_bytes`) or binary files are linked even when embedding; missing files, folders and
    paths outside the root (through `..`, absolute paths or symlinks) get no block. URIs are
    absolute `file://` URIs under the root as given; text is UTF-8 with replacement.
    """
    blocks: list[ContentBlock] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for mention in find_mentions(text):
        shown = f"@{mention.path}"
        try:
            real = confine(root, mention.path)
        except OutsideRoot:
            problems.append(f"{shown}: outside the session's folder, not sent")
            continue
        except (OSError, ValueError) as error:
            problems.append(f"{shown}: {error}")
            continue
        if real in seen:
            continue
        seen.add(real)
        block, problem = _file_block(root, mention.path, real, embedded, max_bytes)
        if block is not None:
            blocks.append(block)
        if problem is not None:
            problems.append(f"{shown}: {problem}")
    return blocks, problems


def _file_block(
    root: Path, mentioned: str, real: Path, embedded: bool, max_bytes: int
) -> tuple[ContentBlock | None, str | None]:
    """The block for one confined file and the problem to report, if any."""
    try:
        info = real.stat()
    except FileNotFoundError:
        return None, "no such file in the session's folder"
    except OSError as error:
        return None, f"cannot read it ({error.strerror or error})"
    if not stat.S_ISREG(info.st_mode):
        return None, "not a file"
    shown = _shown_path(root, mentioned, real)
    uri = shown.as_uri()
    name = shown.name
    mime = mimetypes.guess_type(name)[0]

    def link() -> ContentBlock:
        return resource_link_block(name, uri, mime_type=mime, size=info.st_size)

    if not embedded:
        return link(), None
    if info.st_size > max_bytes:
        size = info.st_size
        return link(), f"too large to embed ({size} bytes, limit {max_bytes}): sent as a link"
    try:
        with real.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as error:
        return None, f"cannot read it ({error.strerror or error})"
    if len(data) > max_bytes:
        return link(), f"too large to embed (over {max_bytes} bytes): sent as a link"
    if b"\0" in data[:BINARY_SNIFF]:
        return link(), "binary file: sent as a link"
    content = data.decode("utf-8", "replace")
    resource = embedded_text_resource(uri, content, mime_type=mime or "text/plain")
    return resource_block(resource), None


def _shown_path(root: Path, mentioned: str, real: Path) -> Path:
    """The absolute path the agent is told about: under the root as the session knows it
    (not resolved through symlinks), unless the mention only reaches the root by resolving."""
    absolute_root = Path(os.path.abspath(root))
    lexical = Path(os.path.abspath(absolute_root / mentioned))
    if lexical == absolute_root or absolute_root in lexical.parents:
        return lexical
    return real
