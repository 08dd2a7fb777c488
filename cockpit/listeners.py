"""The listeners of an engine, in process or over the socket: both tell every event to
every subscriber the same way, and one that fails is logged, never let stop the others."""

from __future__ import annotations

import logging
from collections.abc import Callable

from cockpit.api import EngineEvent, Listener

log = logging.getLogger(__name__)


class Listeners:
    """Who hears an engine's events, in the order they subscribed."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every event; returns the function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: EngineEvent) -> None:
        """Tell `event` to each listener (one subscribed meanwhile hears the next one)."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("a listener of the engine failed")
