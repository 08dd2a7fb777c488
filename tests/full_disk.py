"""A disk that fills, for real: SQLite's own limit on the store's writer connection.

`PRAGMA max_page_count` caps the pages the database may grow to; a write past it fails
with SQLITE_FULL ("database or disk is full") exactly as a full disk does (SQLite may roll
the transaction back by itself), and raising the cap again is room coming back. It is a
setting of one connection, so the tests reach the store's writer and set it there; nothing
in Cockpit knows about it.

Run as a module, this is `cockpit` itself with every store it opens on such a disk:

    python -m tests.full_disk ROOM FREE_AFTER COCKPIT-ARGUMENTS...

ROOM is how many pages each database may still grow by once open, FREE_AFTER the seconds
after the first failed write at which room comes back (negative: never).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from store.store import Store

NO_LIMIT = 4294967294
"""SQLite's largest max_page_count: as much room as the file system has."""


async def pages(store: Store) -> int:
    """The pages the store's database holds now, as its writer sees it."""
    async with store._writer.execute("PRAGMA page_count") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def fill(store: Store, room: int = 0) -> None:
    """The disk is full: the database may grow by `room` more pages, no more."""
    await store._writer.execute(f"PRAGMA max_page_count = {await pages(store) + room}")


async def free(store: Store) -> None:
    """Room comes back."""
    await store._writer.execute(f"PRAGMA max_page_count = {NO_LIMIT}")


async def free_later(store: Store, seconds: float) -> None:
    await asyncio.sleep(seconds)
    await free(store)


def on_a_full_disk(room: int, free_after: float) -> None:
    """Make every store this process opens fill up `room` pages after it opens, and get
    its room back `free_after` seconds after its first failed write (never if negative)."""
    opening = Store.open

    async def open_full(path: str | os.PathLike[str], **options: Any) -> Store:
        store = await opening(path, **options)
        await fill(store, room)
        if free_after < 0:
            return store
        freeing: list[asyncio.Future[None]] = []

        def watch(failure: Exception | None) -> None:
            if failure is not None and not freeing:
                freeing.append(asyncio.ensure_future(free_later(store, free_after)))

        store.watch_writes(watch)
        return store

    Store.open = open_full  # type: ignore[method-assign]


def main(arguments: list[str]) -> int:
    from cockpit.cli.main import main as cockpit

    on_a_full_disk(int(arguments[0]), float(arguments[1]))
    return cockpit(arguments[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
