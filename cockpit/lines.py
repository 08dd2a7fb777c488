"""Reading newline-framed messages from a stream without letting the other end choose how
much of it is held: a line past the bound is read to its end and let go as it comes, and
only its length and its first bytes are kept. An agent's stdout and a client's socket are
both read this way."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

HEAD_BYTES = 256
"""What is kept of a line past the bound: enough to say what it was (a request's id)."""


@dataclass(frozen=True)
class Line:
    """One line read: its bytes (its first HEAD_BYTES only when it is too long), and its
    whole length."""

    data: bytes
    size: int
    too_long: bool


async def read_line(stream: asyncio.StreamReader, max_line: int | None) -> Line | None:
    """The next line of `stream`, its newline included (None at the end of the stream). A
    line longer than `max_line` bytes (None: no bound) comes back with only its head."""
    parts: list[bytes] = []
    size = 0
    head: bytes | None = None
    """What is kept once the line is past the bound (what was read of it is let go)."""
    while True:
        ended = True
        try:
            part = await stream.readuntil(b"\n")
        except asyncio.LimitOverrunError as error:  # no newline in the buffer yet
            part = await stream.readexactly(error.consumed)
            ended = False
        except asyncio.IncompleteReadError as error:  # the stream ended
            if not error.partial and not parts and head is None:
                return None
            part = error.partial
        size += len(part)
        if head is None and max_line is not None and size > max_line:
            head = b"".join(_first(HEAD_BYTES, [*parts, part]))
            parts.clear()
        elif head is None:
            parts.append(part)
        if ended:
            if head is not None:
                return Line(head, size, too_long=True)
            return Line(b"".join(parts), size, too_long=False)


def _first(count: int, parts: list[bytes]) -> list[bytes]:
    """The pieces that make the first `count` bytes of `parts`."""
    kept: list[bytes] = []
    for part in parts:
        if count <= 0:
            break
        kept.append(part[:count])
        count -= len(part)
    return kept
