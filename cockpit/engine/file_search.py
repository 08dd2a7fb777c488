"""`@` completion's file search, where the files are: one index per session folder, built on
first use and rebuilt behind the one that answers once it is REFRESH seconds old, so files
an agent creates show up without a keystroke paying for the rebuild."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path

from cockpit.api import FileMatch
from cockpit.engine.file_index.index import FileIndex

log = logging.getLogger(__name__)

REFRESH = 10.0
"""Seconds an index answers before a new one is built behind it."""


class FileSearch:
    """The file indexes of the folders searched so far."""

    def __init__(self, refresh: float = REFRESH) -> None:
        self.refresh = refresh
        self._indexes: dict[str, tuple[FileIndex, float]] = {}
        self._rebuilds: set[asyncio.Task[None]] = set()

    async def find(self, root: str, query: str, limit: int) -> list[FileMatch]:
        """The files under `root` that match `query` best. A search over a big repository
        takes tens of milliseconds: it runs off the event loop."""
        index = await self._index(root)
        matches = await asyncio.to_thread(index.search, query, limit)
        return [FileMatch(match.path, match.positions) for match in matches]

    async def _index(self, root: str) -> FileIndex:
        known = self._indexes.get(root)
        if known is None:
            index = await FileIndex.build(Path(root))
            self._indexes[root] = (index, time.monotonic())
            return index
        index, built = known
        if time.monotonic() - built > self.refresh:
            self._indexes[root] = (index, time.monotonic())  # one rebuild at a time
            task = asyncio.ensure_future(self._rebuild(root))
            self._rebuilds.add(task)
            task.add_done_callback(self._rebuilds.discard)
        return index

    async def _rebuild(self, root: str) -> None:
        try:
            self._indexes[root] = (await FileIndex.build(Path(root)), time.monotonic())
        except Exception:
            log.exception("could not list the files of %s", root)

    async def close(self) -> None:
        """Stop the rebuilds under way."""
        for task in list(self._rebuilds):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._rebuilds, return_exceptions=True)
