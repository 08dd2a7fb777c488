"""The errors the store raises that its users catch: plain classes, importable without
the database (a client of the engine catches them too)."""

from __future__ import annotations


class SessionBusy(RuntimeError):
    """Another Cockpit (another process, or another open Store) is writing this session."""

    def __init__(self, session: str, message: str) -> None:
        super().__init__(message)
        self.session = session


class SchemaError(RuntimeError):
    """The database cannot be used by this version of Cockpit."""


class UnknownSession(KeyError):
    """No session with this id is stored."""


class WriteConflict(SessionBusy):
    """A write found another message where this store's row belongs: some other writer
    (another Cockpit, bypassing the session lock) wrote this session. Nothing was
    overwritten; the rows stay in memory, unwritten."""


class StoreUnreadable(RuntimeError):
    """The store cannot be read: its file is not a database, the disk failed the read, or a
    writer holds it longer than a reader waits. The message says which, in one sentence."""
