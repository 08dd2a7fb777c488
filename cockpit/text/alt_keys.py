"""Alt+letter as the terminal sends it (ESC, then the letter), told apart in a burst.

Textual's parser waits, after an ESC, for the rest of a longer sequence: ESC w alone is
Alt+W once a short delay passes. But when more input comes in the same read (Alt+W then
Down, typed fast or sent by tmux in one write), the next ESC made it give up and report
the ESC as `^` and the `w` as a plain letter: the dialog's Alt+W never happened and a `w`
went elsewhere. An ESC followed by a printable character that begins no longer sequence
is always that character with Alt, so it is rewritten as the same key in the keyboard
protocol's own form (CSI code;3 u), which Textual reads at once. Pure: text in, text out;
a bracketed paste is left as pasted.
"""

from __future__ import annotations

import re

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
INTRODUCERS = frozenset("[O]P\\_^X")
"""What follows an ESC that begins a longer sequence (CSI, SS3, OSC, DCS, ST, APC, PM,
SOS): never a key with Alt."""

_ALT = re.compile("\x1b([\x20-\x7e])")


def alt_keys_spelled_out(text: str, pasting: bool = False) -> tuple[str, bool]:
    """`text` (one read from the terminal) with each ESC-letter as its keyboard-protocol
    sequence, and whether a bracketed paste is still open at its end (`pasting`: one was
    open at its start; what is pasted is never changed)."""
    out: list[str] = []
    rest = text
    while rest:
        if pasting:
            end = rest.find(PASTE_END)
            if end < 0:
                out.append(rest)
                return "".join(out), True
            out.append(rest[: end + len(PASTE_END)])
            rest, pasting = rest[end + len(PASTE_END) :], False
            continue
        start = rest.find(PASTE_START)
        keys = rest if start < 0 else rest[:start]
        out.append(_ALT.sub(_spelled, keys))
        if start < 0:
            break
        out.append(PASTE_START)
        rest, pasting = rest[start + len(PASTE_START) :], True
    return "".join(out), pasting


def _spelled(match: re.Match[str]) -> str:
    character = match.group(1)
    if character in INTRODUCERS:
        return match.group(0)
    return f"\x1b[{ord(character)};3u"
