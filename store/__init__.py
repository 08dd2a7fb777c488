"""Cockpit's transcript store: one row per message, pages bounded by rows and bytes.

Pure rules live in `store.fold`, `store.paging`, `store.view` and `store.chunks`; the
aiosqlite-backed `Store` applies them. Nothing here imports Textual or the ACP SDK.
"""

from store.chunks import NOTE_KINDS, Chunk, chunk_from_update, note
from store.locks import SessionBusy
from store.model import Frame, Page, Row, SessionRecord
from store.schema import SchemaError
from store.store import Store, UnknownSession, WriteConflict
from store.view import Bubble, Change, ViewTranscript

__all__ = [
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
    "Store",
    "UnknownSession",
    "ViewTranscript",
    "WriteConflict",
    "chunk_from_update",
    "note",
]
