"""What each session needs from the user, as the rail ranks it, and the questions asked
across sessions (which one Ctrl+G goes to, what quitting would stop). No Textual here, so
every rule is tested without an app."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cockpit.api import Status
from cockpit.ui.one_line import clean_line


class RailState:
    """What a session needs from the user, in the order the rail ranks attention."""

    NEEDS_YOU = "needs-you"
    ERROR = "error"
    UNREAD = "unread"
    WORKING = "working"
    STARTING = "starting"
    IDLE = "idle"
    CLOSED = "closed"


GLYPHS: Mapping[str, str] = {
    RailState.NEEDS_YOU: "!",
    RailState.ERROR: "✗",
    RailState.UNREAD: "◆",
    RailState.WORKING: "●",
    RailState.STARTING: "◌",
    RailState.IDLE: "○",
    RailState.CLOSED: "·",
}
"""One character per state, distinct in shape as well as colour (16-colour terminals)."""

STATE_WORDS: Mapping[str, str] = {
    RailState.NEEDS_YOU: "needs you",
    RailState.ERROR: "error",
    RailState.UNREAD: "finished, unread",
    RailState.WORKING: "working",
    RailState.STARTING: "starting",
    RailState.IDLE: "idle",
    RailState.CLOSED: "closed",
}


def rail_state(
    live_status: str,
    stored_status: str,
    pending: int,
    unread: bool,
    current: bool,
) -> str:
    """The state a session shows in the rail.

    A pending permission trumps everything; then a dead agent; then what the agent is
    doing; then what it did that the user has not seen (never for the session on screen).
    """
    if pending:
        return RailState.NEEDS_YOU
    # With no agent running, only how it ended carries over: a stored "working" is stale
    # (Cockpit stopped mid-turn) and nothing runs now.
    if live_status != Status.CLOSED:
        status = live_status
    elif stored_status in (Status.ERROR, Status.EXITED):
        status = stored_status
    else:
        status = Status.CLOSED
    if status in (Status.ERROR, Status.EXITED):
        return RailState.ERROR
    if status == Status.WAITING:
        return RailState.NEEDS_YOU
    if status in (Status.WORKING, Status.CANCELLING):
        return RailState.WORKING
    if status == Status.STARTING:
        return RailState.STARTING
    if not current and unread:
        return RailState.UNREAD
    if live_status == Status.READY:
        return RailState.IDLE
    return RailState.CLOSED


def next_needing(
    order: Sequence[str], states: Mapping[str, str], current: str | None
) -> str | None:
    """The session Ctrl+G goes to: after `current` in rail order (wrapping), the first that
    asks a question, else the first with something unread; None when no other needs the
    user."""
    start = order.index(current) + 1 if current in order else 0
    rotated = [*order[start:], *order[:start]]
    for wanted in (RailState.NEEDS_YOU, RailState.UNREAD):
        for session in rotated:
            if session != current and states.get(session) == wanted:
                return session
    return None


def quit_question(running: int, waiting: int, not_saved: str | None = None) -> str | None:
    """What quitting would stop, as a question ("2 turns are running and 1 question waits"),
    or None when nothing runs or waits and Cockpit may quit at once. While the transcript
    cannot be saved (`not_saved` says why: the disk is full), quitting loses what the store
    holds in memory, so it is always asked."""
    if not running and not waiting and not_saved is None:
        return None
    parts = []
    if running:
        parts.append(f"{running} turn{'s are' if running > 1 else ' is'} running")
    if waiting:
        parts.append(f"{waiting} question{'s wait' if waiting > 1 else ' waits'} for you")
    if not_saved is not None:
        parts.append(f"the transcript is not saved ({clean_line(not_saved)})")
    endings = ["every agent stops with it"] if running or waiting else []
    endings += ["what is not saved is lost"] if not_saved is not None else []
    return f"Quit Cockpit? {' and '.join(parts)}; {' and '.join(endings)}."
