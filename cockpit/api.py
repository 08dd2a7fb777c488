"""What the engine tells its subscribers (the TUI, the command line, tests)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cockpit.text.textout import listed
from store import Frame


class Status:
    """A live session's state, as the rail shows it."""

    STARTING = "starting"
    READY = "ready"
    WORKING = "working"
    CANCELLING = "cancelling"
    """The user cancelled the running turn; the agent has not ended it yet."""
    WAITING = "waiting"
    """A permission request waits for the user."""
    CLOSED = "closed"
    """No agent process; prompting starts one."""
    EXITED = "exited"
    """The agent died; prompting restarts it."""
    ERROR = "error"
    """The agent could not be started."""


@dataclass(frozen=True)
class PermissionRequest:
    """An agent asks before it acts: the tool call and the agent's own options."""

    id: str
    session: str
    tool_call: Mapping[str, Any]
    options: tuple[Mapping[str, Any], ...]
    created: float = field(default_factory=time.time)

    @property
    def tool_call_id(self) -> str:
        """The tool call this request is about."""
        return str(self.tool_call.get("toolCallId", ""))

    @property
    def title(self) -> str:
        """What the agent wants to do, in its words."""
        return str(self.tool_call.get("title") or "a tool call")

    @property
    def kind(self) -> str:
        """The tool kind (read, edit, execute...), "other" when the agent gives none."""
        return str(self.tool_call.get("kind") or "other")

    def diffs(self) -> list[Mapping[str, Any]]:
        """The diff contents the request carries, for showing what would change."""
        return [
            item
            for item in listed(self.tool_call.get("content"))
            if isinstance(item, Mapping) and item.get("type") == "diff"
        ]


@dataclass(frozen=True)
class FramesEvent:
    """Rows of a session changed: fold these frames into the view."""

    session: str
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class StatusEvent:
    """A session's live state changed."""

    session: str
    status: str
    detail: str = ""
    turn_ended: bool = False
    """True when this change ends a turn (`detail` is then its stop reason)."""


@dataclass(frozen=True)
class PermissionEvent:
    """A permission request appeared (resolved=False) or was answered (resolved=True)."""

    request: PermissionRequest
    resolved: bool
    option_id: str | None = None


@dataclass(frozen=True)
class SessionEvent:
    """A session's stored fields changed (title, mode, options, commands, usage)."""

    session: str


@dataclass(frozen=True)
class AttentionEvent:
    """A session became unread (it did something the user has not seen) or was read."""

    session: str
    unread: bool


@dataclass(frozen=True)
class ProblemEvent:
    """Something went wrong that the session's transcript could not record (the store
    failed, or another Cockpit writes the session): the user must still hear of it."""

    session: str | None
    message: str


@dataclass(frozen=True)
class SavingEvent:
    """Writing the transcript started failing (`problem` says why in one line: the disk is
    full) or works again (None). Until then what the agents send is held in memory and
    retried, and it is lost if Cockpit quits; the status line says so while it lasts. (A
    problem event with the whole story comes with the failure.)"""

    problem: str | None


EngineEvent = (
    FramesEvent
    | StatusEvent
    | PermissionEvent
    | SessionEvent
    | AttentionEvent
    | ProblemEvent
    | SavingEvent
)
