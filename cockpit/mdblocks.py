"""Splitting a streaming Markdown text into sealed top-level blocks and an open tail.

A reply streams in 3-4 character chunks; re-parsing all of it on every chunk makes the
cost grow with the square of its length. A block that is followed by a blank line and
then by a new unindented line, outside a fenced code block, can no longer change: it is
sealed and rendered once. Only the open tail is re-rendered as text arrives. Pure: the
same text gives the same blocks however it was chunked.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class BlockSplitter:
    """Feeds on text; hands out sealed blocks; keeps the open tail.

    Invariant: `"".join(all sealed blocks) + tail` is exactly the text fed so far.
    """

    def __init__(self) -> None:
        self.tail = ""
        self._scanned = 0
        """How much of `tail` has been read line by line."""
        self._fence: str | None = None
        """The fence marker of the code block we are inside, if any."""
        self._blank = False
        """True after a blank line: a new unindented line would start a new block."""

    def feed(self, text: str) -> list[str]:
        """Add text; return the blocks it sealed, in order."""
        self.tail += text
        sealed: list[str] = []
        while True:
            end = self.tail.find("\n", self._scanned)
            if end == -1:
                return sealed
            line = self.tail[self._scanned : end]
            start = self._scanned
            self._scanned = end + 1
            block = self._line(line, start)
            if block is not None:
                sealed.append(block)

    def _line(self, line: str, start: int) -> str | None:
        fence = _FENCE.match(line)
        if self._fence is not None:
            if (
                fence
                and fence.group(1)[0] == self._fence[0]
                and len(fence.group(1)) >= len(self._fence)
            ):
                self._fence = None
            return None
        if not line.strip():
            self._blank = True
            return None
        sealed = None
        if self._blank and not line[0].isspace():
            sealed, self.tail = self.tail[:start], self.tail[start:]
            self._scanned -= start
        self._blank = False
        if fence:
            self._fence = fence.group(1)
        return sealed


def split_blocks(text: str) -> tuple[list[str], str]:
    """All sealed blocks of `text` and its open tail (the one-shot form of BlockSplitter)."""
    splitter = BlockSplitter()
    return splitter.feed(text), splitter.tail
