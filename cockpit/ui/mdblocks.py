"""Splitting a streaming Markdown text into sealed top-level blocks and an open tail.

A reply streams in 3-4 character chunks; re-parsing all of it on every chunk makes the
cost grow with the square of its length. A block that is followed by a blank line and
then by a new unindented line, outside a fenced code block, can no longer change: it is
sealed and rendered once. Only the open tail is re-rendered as text arrives. Pure: the
same text gives the same blocks however it was chunked.
"""

from __future__ import annotations

import re

from store.pieces import Pieces

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class BlockSplitter:
    """Feeds on text; hands out sealed blocks; keeps the open tail.

    Invariant: `"".join(all sealed blocks) + tail` is exactly the text fed so far.

    Only the text fed is scanned, and the open block is kept as pieces (`store.pieces`),
    so feeding a block in thousands of pieces costs its length, however long it gets
    (a huge code block, a paragraph without a break): each line is joined once, when it
    ends, and each block once, when it seals.
    """

    def __init__(self) -> None:
        self._open = Pieces()
        """The complete lines of the open block."""
        self._line = Pieces()
        """The line being written (no newline yet)."""
        self._fence: str | None = None
        """The fence marker of the code block we are inside, if any."""
        self._blank = False
        """True after a blank line: a new unindented line would start a new block."""

    @property
    def tail(self) -> str:
        """The open block: the text fed since the last sealed block."""
        return self._open.text + self._line.text

    def feed(self, text: str) -> list[str]:
        """Add text; return the blocks it sealed, in order."""
        sealed: list[str] = []
        start = 0
        while (end := text.find("\n", start)) != -1:
            self._line.append(text[start : end + 1])
            line, self._line = self._line.text, Pieces()
            start = end + 1
            if self._starts_block(line[:-1]):
                sealed.append(self._open.text)
                self._open = Pieces()
            self._open.append(line)
        self._line.append(text[start:] if start else text)
        return sealed

    def _starts_block(self, line: str) -> bool:
        """Read one complete line (without its newline): True when it starts a new block,
        which seals the open one."""
        fence = _FENCE.match(line)
        if self._fence is not None:
            if (
                fence
                and fence.group(1)[0] == self._fence[0]
                and len(fence.group(1)) >= len(self._fence)
            ):
                self._fence = None
            return False
        if not line.strip():
            self._blank = True
            return False
        starts = self._blank and not line[0].isspace()
        self._blank = False
        if fence:
            self._fence = fence.group(1)
        return starts


def split_blocks(text: str) -> tuple[list[str], str]:
    """All sealed blocks of `text` and its open tail (the one-shot form of BlockSplitter)."""
    splitter = BlockSplitter()
    return splitter.feed(text), splitter.tail
