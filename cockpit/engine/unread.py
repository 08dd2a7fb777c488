"""Which sessions did something the user has not seen: the session on screen is read as
things happen in it; any other that changes (a row grows, a turn ends, an agent dies)
becomes unread until the user shows it. The store keeps the flag across restarts."""

from __future__ import annotations

from collections.abc import Callable

from cockpit.api import AttentionEvent, EngineEvent, FramesEvent, Status, StatusEvent
from store.store import Store

ENDED_TURN = frozenset({Status.EXITED, Status.ERROR})


def changed_session(event: EngineEvent) -> str | None:
    """The session an event shows doing something the user would want to see (a row
    changing, a turn ending, an agent dying), else None. The user's own prompt is not news
    to them, and a question waiting is shown as one, not as unread."""
    if isinstance(event, FramesEvent) and any(frame.kind != "user" for frame in event.frames):
        return event.session
    if isinstance(event, StatusEvent) and (event.turn_ended or event.status in ENDED_TURN):
        return event.session
    return None


class Unread:
    """The unread sessions and the one on screen."""

    def __init__(self, store: Store, emit: Callable[[EngineEvent], None]) -> None:
        self._store = store
        self._emit = emit
        self._unread: set[str] = set()
        """Sessions that did something the user has not seen (persisted on each change)."""
        self._shown: dict[str, str] = {}
        """The session each viewer has on screen (a TUI attached to the service is one
        viewer; several may show several sessions at once)."""

    def restore(self, session_id: str) -> None:
        """A session the store holds as unread (read when the engine opens)."""
        self._unread.add(session_id)

    def noticed(self, event: EngineEvent) -> None:
        """An event the engine emits: the session it changed is unread unless shown."""
        changed = changed_session(event)
        if changed is not None and changed not in self._shown.values():
            self.set_unread(changed, True)

    def show(self, session_id: str | None, viewer: str = "") -> None:
        """The session `viewer` has on screen now (None: none, or the viewer went away);
        it is read."""
        if session_id is None:
            self._shown.pop(viewer, None)
            return
        self._shown[viewer] = session_id
        self.set_unread(session_id, False)

    def unread(self, session_id: str) -> bool:
        """True when the session did something the user has not seen."""
        return session_id in self._unread

    def set_unread(self, session_id: str, unread: bool) -> None:
        """Mark a session unread or read: stored, and told to the clients."""
        if (session_id in self._unread) == unread:
            return
        if unread:
            self._unread.add(session_id)
        else:
            self._unread.discard(session_id)
        self._store.mark(session_id, unread=unread)
        self._emit(AttentionEvent(session_id, unread))

    def forget(self, session_id: str) -> None:
        """A deleted session is nobody's news."""
        self._unread.discard(session_id)
