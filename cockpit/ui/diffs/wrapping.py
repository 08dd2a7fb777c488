"""Where a long line of code wraps: at a word boundary, so that a word is read whole on one
line (cut at the column only when it is longer than a line). Every character stays, in
order: only where the lines break changes. Plain Python, no Rich renderables."""

from __future__ import annotations

from rich.cells import get_character_cell_size


def wrap_offsets(text: str, width: int) -> list[int]:
    """The offsets in `text` where a new line starts, each line at most `width` cells
    (spaces at the end of a line may go past it: they show nothing). A line breaks after
    the last space that follows a word; it is cut at the column when it has no such
    space, only indentation before it, or when the word it would carry over is longer
    than a line anyway (moving it down would only waste the room)."""
    width = max(width, 1)
    offsets: list[int] = []
    start = 0
    while start < len(text):
        cells, end, boundary = 0, start, None
        while end < len(text):
            size = get_character_cell_size(text[end])
            if cells + size > width:
                break
            cells += size
            end += 1
            if text[end - 1].isspace() and text[start : end - 1].strip():
                boundary = end
        if end >= len(text):
            break
        if end == start:  # a character wider than the line still takes one
            end += 1
        elif not text[end].isspace() and boundary is not None and _fits(text, boundary, width):
            end = boundary
        while end < len(text) and text[end].isspace():
            end += 1
        if end >= len(text):
            break
        offsets.append(end)
        start = end
    return offsets


def _fits(text: str, start: int, width: int) -> bool:
    """Whether the word at `start` fits on one line of `width` cells."""
    cells = 0
    for character in text[start:]:
        if character.isspace():
            return True
        cells += get_character_cell_size(character)
        if cells > width:
            return False
    return True
