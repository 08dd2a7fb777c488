"""Up and Down through the prompts sent in a session, as a shell's history does."""

from __future__ import annotations

from collections.abc import Iterable


class PromptHistory:
    """Up/Down through earlier prompts, keeping what was being typed as the newest entry."""

    def __init__(self, entries: Iterable[str] = ()) -> None:
        self.entries: list[str] = []
        self._index: int | None = None
        self._draft = ""
        self.reset(entries)

    def reset(self, entries: Iterable[str]) -> None:
        """Another session's prompts: browsing starts again from the newest (an index into
        the history shown before pointed past the end of a shorter one)."""
        self.entries = [entry for entry in entries if entry.strip()]
        self._index = None
        self._draft = ""

    def add(self, prompt: str) -> None:
        """Remember a sent prompt (not twice in a row) and stop browsing."""
        if prompt.strip() and (not self.entries or self.entries[-1] != prompt):
            self.entries.append(prompt)
        self._index = None

    def older(self, current: str) -> str | None:
        """The previous prompt, or None at the oldest."""
        if not self.entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self.entries[self._index]

    def newer(self) -> str | None:
        """The next prompt, the draft after the newest, or None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self.entries):
            self._index = None
            return self._draft
        return self.entries[self._index]


class PromptSearch:
    """Ctrl+R: earlier prompts that hold what is typed, newest first, one of them chosen
    (as a shell's reverse search; any case). The draft is not touched while searching:
    only taking a match changes it."""

    def __init__(self, entries: Iterable[str]) -> None:
        self._entries = list(entries)
        self.query = ""
        self.matches: list[str] = []
        """The prompts that hold the query, newest first, each once."""
        self.chosen = 0
        """Which of `matches` Enter takes."""
        self._find()

    def type(self, text: str) -> None:
        """More of the query: the newest prompt that holds it is chosen."""
        self.query += text
        self._find()

    def erase(self) -> None:
        """Backspace: the query one character shorter."""
        self.query = self.query[:-1]
        self._find()

    def older(self) -> None:
        """Ctrl+R again, or Up: the next older match (it stays on the oldest)."""
        self.chosen = min(self.chosen + 1, max(len(self.matches) - 1, 0))

    def newer(self) -> None:
        """Down: the next newer match (it stays on the newest)."""
        self.chosen = max(self.chosen - 1, 0)

    def choose(self, index: int) -> None:
        """A match picked by its place in `matches` (a click)."""
        if 0 <= index < len(self.matches):
            self.chosen = index

    @property
    def match(self) -> str | None:
        """The chosen prompt, or None when nothing holds the query."""
        return self.matches[self.chosen] if self.matches else None

    def _find(self) -> None:
        wanted = self.query.lower()
        seen: set[str] = set()
        self.matches = []
        for entry in reversed(self._entries):
            if wanted in entry.lower() and entry not in seen:
                seen.add(entry)
                self.matches.append(entry)
        self.chosen = 0
