"""The questions waiting for the user (permission requests), as both engines answer the
contract's immediate questions about them: the engine from its live sessions, a client of
the service from its mirror. Pure: each takes the requests in the order they were asked."""

from __future__ import annotations

from collections.abc import Iterable

from cockpit.api import PermissionRequest


def waiting(
    requests: Iterable[PermissionRequest], session_id: str | None = None
) -> list[PermissionRequest]:
    """The requests of one session (or of all: None), oldest first."""
    found = [request for request in requests if session_id is None or request.session == session_id]
    return sorted(found, key=lambda request: request.created)


def waiting_count(requests: Iterable[PermissionRequest], session_id: str | None = None) -> int:
    """How many requests wait in one session (or in all: None), without listing them."""
    return sum(session_id is None or request.session == session_id for request in requests)


def first_waiting(
    requests: Iterable[PermissionRequest], session_id: str
) -> PermissionRequest | None:
    """The request of a session asked first (the one its prompt shows)."""
    return next((request for request in requests if request.session == session_id), None)
