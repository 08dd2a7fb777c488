"""The engine's events as Textual messages: one message class per event type of
`cockpit.api`, each handled by its own `@on` method of the app, in the order the engine
sent them (the app's message queue keeps it).

`EngineListener` is what the app subscribes to the engine. Frames are the exception to one
message per event: a fast stream (or eight) would queue thousands of messages ahead of the
user's keys, so frames wait in a buffer and ONE `FramesReady` at a time asks the app to
take all of them. Every other event goes through the queue after the frames that came
before it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from textual.message import Message

from cockpit.api import (
    AttentionEvent,
    EngineEvent,
    FramesEvent,
    LinkEvent,
    PermissionEvent,
    ProblemEvent,
    ResyncEvent,
    SavingEvent,
    SessionEvent,
    StatusEvent,
)
from store import Frame


@dataclass
class StatusChanged(Message):
    """A session's live state changed (and perhaps its turn ended)."""

    event: StatusEvent


@dataclass
class PermissionChanged(Message):
    """A permission request was asked or answered."""

    event: PermissionEvent


@dataclass
class SessionChanged(Message):
    """A session's stored fields changed (title, mode, options, commands, usage)."""

    event: SessionEvent


@dataclass
class AttentionChanged(Message):
    """A session became unread, or was read."""

    event: AttentionEvent


@dataclass
class ProblemReported(Message):
    """Something went wrong that the transcript could not record."""

    event: ProblemEvent


@dataclass
class SavingChanged(Message):
    """Writing the transcript started failing, or works again."""

    event: SavingEvent


@dataclass
class ResyncNeeded(Message):
    """What the app holds may be stale (it attached to the service again): read again."""

    event: ResyncEvent


@dataclass
class LinkChanged(Message):
    """The connection to the service was cut, or works again."""

    event: LinkEvent


ENGINE_MESSAGES: Mapping[type[Any], Callable[[Any], Message]] = {
    StatusEvent: StatusChanged,
    PermissionEvent: PermissionChanged,
    SessionEvent: SessionChanged,
    AttentionEvent: AttentionChanged,
    ProblemEvent: ProblemReported,
    SavingEvent: SavingChanged,
    ResyncEvent: ResyncNeeded,
    LinkEvent: LinkChanged,
}
"""The message that carries each type of engine event but frames (held by the listener)."""


def engine_message(event: EngineEvent) -> Message:
    """The message that carries `event` (any event but frames) to the app."""
    return ENGINE_MESSAGES[type(event)](event)


class FramesReady(Message):
    """Frames are waiting in the listener's buffer."""


class EngineListener:
    """The app's subscriber to the engine: posts each event as its message, except frames,
    which are held (per session, in order) behind one `FramesReady` however many come."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._frames: dict[str, list[Frame]] = {}
        self._frames_posted = False

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, FramesEvent):
            self.hold(event)
            return
        self._post(engine_message(event))

    def hold(self, event: FramesEvent) -> None:
        """Keep the frames until the app takes them; ask it once."""
        self._frames.setdefault(event.session, []).extend(event.frames)
        if not self._frames_posted:
            self._frames_posted = True
            self._post(FramesReady())

    def take(self) -> dict[str, list[Frame]]:
        """Every frame held, by session, and the buffer emptied (the next frame asks again)."""
        self._frames_posted = False
        pending, self._frames = self._frames, {}
        return pending
