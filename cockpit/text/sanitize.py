"""Text from an agent is untrusted: before it reaches a terminal, escape sequences and
control characters are removed, so an agent cannot retitle, recolour or clear the
user's terminal, or write to the clipboard. Invisible characters that reorder or hide
text (bidi overrides and isolates, zero-width spaces) are shown as `<U+XXXX>`, so a diff
cannot display code other than the code it changes."""

from __future__ import annotations

import re

_ESCAPES = re.compile(
    r"""
    \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC ... BEL or ST (titles, clipboard, links)
    | \x1b[P^_X][^\x1b]*(?:\x1b\\)?     # DCS, PM, APC, SOS strings
    | \x1b\[[0-?]*[ -/]*[@-~]           # CSI sequences (colours, cursor moves, clears)
    | \x1b[ -/]*[0-~]                   # other two-character escapes
    | \x1b                              # a lone ESC
    | \x9b[0-?]*[ -/]*[@-~]             # 8-bit CSI
    | [\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]  # other controls (keeps \t \n \r)
    """,
    re.VERBOSE,
)


# Bidi embeddings, overrides and isolates (the "Trojan Source" characters), zero-width
# space, word joiner and a byte-order mark inside text. Joiners (U+200C, U+200D) stay:
# emoji sequences and several scripts need them.
_INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff]")


def _shown(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def printable(text: str) -> str:
    """`text` without escape sequences or control characters (tabs and newlines stay;
    a carriage return that is not part of a CRLF goes), its invisible reordering
    characters made visible."""
    cleaned = _ESCAPES.sub("", text.replace("\r\n", "\n")).replace("\r", "")
    return _INVISIBLE.sub(_shown, cleaned)


_UNFINISHED = re.compile(
    r"""
    (?: \x1b\][^\x07\x1b]*     # an OSC whose BEL or ST has not come yet
      | \x1b[P^_X][^\x1b]*     # a DCS, PM, APC or SOS string, likewise
      | \x1b\[[0-?]*[ -/]*     # a CSI without its final byte
      | \x9b[0-?]*[ -/]*       # an 8-bit CSI, likewise
      | \x1b[ -/]*             # ESC alone, or with intermediates only
    )\Z
    """,
    re.VERBOSE,
)

HOLD_LIMIT = 64 * 1024
"""The longest unfinished escape sequence held back; past it the text goes on, cleaned."""


class StreamCleaner:
    """`printable` for text that arrives in pieces (a reply streamed in 4-character chunks).

    Cleaning each piece alone let the inside of a sequence cut between two pieces show as
    text (the title of an OSC, the parameters of a colour): an escape sequence that has not
    ended when a piece does is held back until it ends, and then removed whole. What comes
    out, joined, is `printable` of all the text that went in.
    """

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The printable part of `text` that can be shown now."""
        text = self._held + text
        unfinished = _UNFINISHED.search(text)
        if unfinished is not None and len(text) - unfinished.start() <= HOLD_LIMIT:
            self._held = text[unfinished.start() :]
            text = text[: unfinished.start()]
        else:
            self._held = ""
        return printable(text)

    def flush(self) -> str:
        """What was held back, cleaned: the text has ended (an unfinished sequence goes)."""
        held, self._held = self._held, ""
        return printable(held)
