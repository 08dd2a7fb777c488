"""What a bridge command says on stderr while the screen is up (ssh's "Connection refused"):
read by the client rather than written over the screen, line by line, each cleaned for a
one-line slot, with bounded memory whatever the command writes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Final

from cockpit.text.sanitize import printable

LINE_LIMIT: Final = 400
"""Bytes kept of a line not finished yet (its end): ssh's messages are short lines, and a
command that writes megabytes without a line break costs no more than this."""

_BREAKS: Final = re.compile(rb"[\r\n]")


def one_line(data: bytes) -> str:
    """Bytes of stderr as one clean line: no escape sequences or control characters, runs
    of spaces as one."""
    return " ".join(printable(data.decode("utf-8", "replace")).split())


class LastWords:
    """Splits a command's stderr into lines as it comes (a carriage return ends one too:
    ssh ends its lines with one under a terminal)."""

    def __init__(self) -> None:
        self._open = b""
        """The end of the line not finished yet."""

    def feed(self, data: bytes) -> list[str]:
        """The lines `data` finishes, cleaned, the empty ones left out (of a longer line,
        its last LINE_LIMIT bytes)."""
        *done, rest = _BREAKS.split(data)
        lines = []
        for piece in done:
            line, self._open = one_line((self._open + piece)[-LINE_LIMIT:]), b""
            if line:
                lines.append(line)
        self._open = (self._open + rest)[-LINE_LIMIT:]
        return lines

    def end(self) -> str:
        """The last line when it had no line break ("" when there is none)."""
        line, self._open = one_line(self._open), b""
        return line


async def hear(stream: asyncio.StreamReader, said: Callable[[str], None]) -> None:
    """Read `stream` to its end, calling `said` with each line of it."""
    words = LastWords()
    while chunk := await stream.read(4096):
        for line in words.feed(chunk):
            said(line)
    if last := words.end():
        said(last)
