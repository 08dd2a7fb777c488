"""The store read without an engine (`cockpit ls`, `show` and `inspect` when no service
runs): nothing is started, migrated, recovered or written, so a read answers at once on a
full disk or beside a Cockpit that holds the store. No agent runs for it: every session is
CLOSED here, and those another Cockpit writes are told by their locks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cockpit.api import ModelCalls, Status
from cockpit.engine.model_calls import model_calls
from cockpit.engine.session_names import session_named
from cockpit.paths import DATABASE_NAME
from store import Row, SessionRecord
from store.readonly import ReadOnlyStore


class StoreReader:
    """`cockpit.api.ReaderAPI` over the store in a data folder, read-only."""

    def __init__(self, store: ReadOnlyStore, data_dir: Path) -> None:
        self.store = store
        self.data_dir = data_dir

    @classmethod
    async def open(cls, data_dir: Path) -> StoreReader:
        """The store in `data_dir`, read-only (a missing one holds no session; SchemaError
        and StoreUnreadable say why one cannot be read)."""
        return cls(await ReadOnlyStore.open(data_dir / DATABASE_NAME), data_dir)

    async def close(self, reason: str = "Cockpit quit") -> None:
        await self.store.close()

    async def sessions(self) -> list[SessionRecord]:
        return await self.store.list_sessions()

    async def find_session(self, prefix: str) -> SessionRecord:
        return session_named(await self.store.list_sessions(), prefix)

    def status(self, session_id: str) -> str:
        return Status.CLOSED

    async def running_elsewhere(self, session_ids: Sequence[str]) -> list[str]:
        return [s for s in session_ids if self.store.writer_elsewhere(s) is not None]

    async def rows(self, session_id: str) -> list[Row]:
        return await self.store.all_rows(session_id)

    async def model_calls(self, session: str, call: int | None = None) -> ModelCalls:
        return await model_calls(self.data_dir, self, session, call)
