"""`.gitignore` rules, for trees outside git (inside git, git itself applies them): the
walk that lists such a tree asks `is_ignored` about every file and folder it meets."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path


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
