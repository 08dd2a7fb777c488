"""Agent and user text for one-line slots (a title, a mode, a folder, a piece of the status
line): cleaned of escape sequences and line breaks, and cut to the cells it may take."""

from __future__ import annotations

import os

from rich.cells import cell_len

from cockpit.text.sanitize import printable


def clean_line(text: str) -> str:
    """Agent or user text for a one-line slot (a title, a mode or model name, an option):
    no escape sequences or control characters, line breaks and runs of spaces as one space."""
    return " ".join(printable(text).split())


def clip_cells(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells, with an ellipsis when cut."""
    if cell_len(text) <= width:
        return text
    if width <= 0:
        return ""
    kept = ""
    for character in text:
        if cell_len(kept + character) > width - 1:
            break
        kept += character
    return kept + "…"


def clip_middle(text: str, width: int) -> str:
    """`text` cut to at most `width` terminal cells by taking out its middle, an ellipsis in
    its place: a message's start says what failed and its end why ("ssh: connect to host
    b…: Connection refused")."""
    if cell_len(text) <= width:
        return text
    if width <= 2:
        return clip_cells(text, width)
    tail = ""
    for character in reversed(text):
        if cell_len(character + tail) > (width - 1) // 2:
            break
        tail = character + tail
    return clip_cells(text, width - cell_len(tail)).removesuffix("…") + "…" + tail


def short_folder(path: str, home: str | None = None) -> str:
    """A folder as a user reads it: `~` for home, else the last two parts."""
    home = home if home is not None else os.path.expanduser("~")
    if home and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    parts = [part for part in path.split(os.sep) if part]
    return os.sep.join(parts[-2:]) if len(parts) > 2 else path
