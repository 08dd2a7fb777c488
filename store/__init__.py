"""Cockpit's transcript store: one row per message, pages bounded by rows and bytes.

Pure rules live in `store.fold_rules`, `store.paging`, `store.view` and `store.chunks`; the
aiosqlite-backed `Store` (`store.store`) applies them. This package's names are the pure
ones and the errors, so a client of the engine that folds frames into a view never loads
the database. Nothing here imports Textual or the ACP SDK.
"""

from store.chunks import ASIDE_KINDS, NOTE_KINDS, Chunk, chunk_from_update, note, shell_run
from store.errors import (
    SchemaError,
    SessionBusy,
    StoreUnreadable,
    UnknownSession,
    WriteConflict,
)
from store.model import Frame, Page, Row, SessionRecord
from store.view import Bubble, Change, ViewTranscript

__all__ = [
    "ASIDE_KINDS",
    "NOTE_KINDS",
    "Bubble",
    "Change",
    "Chunk",
    "Frame",
    "Page",
    "Row",
    "SchemaError",
    "SessionBusy",
    "SessionRecord",
    "StoreUnreadable",
    "UnknownSession",
    "ViewTranscript",
    "WriteConflict",
    "chunk_from_update",
    "note",
    "shell_run",
]
