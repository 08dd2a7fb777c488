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
