"""A text that grows at its end, kept as pieces.

A reply streams in thousands of 3-4 character pieces. Appending each to a string copies
everything held so far, so a long reply costs the square of its length; a plain list of
the pieces costs a Python object per piece (about 60 bytes for 4 characters). `Pieces`
appends without copying what it holds, joins small pieces in runs (each character is
copied once more, and a text holds about one object per kilobyte), and joins all of it
only when it is read, once until the next append. Pure, shared by the view fold and the
widgets that show a streaming reply.
"""

from __future__ import annotations

RUN = 256
"""How many small pieces are joined into one: appending costs each character one more
copy, and 4-character pieces are held as 1 KB strings."""


class Pieces:
    """A growing text: `append` at the end, `text` to read it whole."""

    __slots__ = ("_length", "_parts", "_unjoined")

    def __init__(self, text: str = "") -> None:
        self._parts: list[str] = [text] if text else []
        self._unjoined = 0
        """How many pieces at the end came from `append` since the last run was joined."""
        self._length = len(text)

    def __len__(self) -> int:
        return self._length

    def append(self, text: str) -> None:
        """Add `text` at the end, without copying what is held."""
        if not text:
            return
        self._parts.append(text)
        self._length += len(text)
        self._unjoined += 1
        if self._unjoined >= RUN:
            self._parts[-RUN:] = ["".join(self._parts[-RUN:])]
            self._unjoined = 0

    @property
    def text(self) -> str:
        """The whole text (joined once, then kept joined until the next append)."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
            self._unjoined = 0
        return self._parts[0] if self._parts else ""

    def __repr__(self) -> str:
        return f"Pieces(length={self._length}, parts={len(self._parts)})"
