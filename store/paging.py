"""Pure paging rules: a page is bounded by rows AND bytes and never cuts a message."""

from __future__ import annotations

from collections.abc import Sequence

PAGE_ROWS = 120
PAGE_BYTES = 256 * 1024


def page_length(
    sizes: Sequence[int], max_rows: int = PAGE_ROWS, max_bytes: int = PAGE_BYTES
) -> int:
    """How many rows, taken in order from `sizes` (each a row's byte size), make one page.

    Rows are taken until the next one would pass `max_rows` or push the total past
    `max_bytes`; the first row is always taken, however large, so a page is never
    empty while rows remain. A message is one row, so no boundary can cut one.
    """
    if max_rows < 1:
        raise ValueError("a page holds at least one row")
    total = 0
    for index, size in enumerate(sizes):
        if index == max_rows or (index and total + size > max_bytes):
            return index
        total += size
    return len(sizes)
