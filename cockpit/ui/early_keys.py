"""Keys typed while Cockpit starts are kept for the prompt.

From launch to a screen with a session in it takes a moment (Python's start, the store, a
service to reach). The terminal delivers what was typed meanwhile as soon as Textual
reads it, when no prompt is there yet: Textual gave the keyboard to the first widget it
could (the rail), and the keys were lost. Until the screen is ready they are held, and
then handled in the order typed, as if they had come just then.

An Enter typed before Cockpit has the terminal (while Python starts) arrives as a new line:
the terminal, not yet in raw mode, turns it into one. The prompt then waits, whole, for
an Enter.
"""

from __future__ import annotations

from textual import events

from cockpit.ui.base import CockpitBase


class EarlyKeys(CockpitBase):
    """Holds the keys (and pastes) typed before the screen is ready."""

    _keys_open = False
    _held: tuple[events.Key | events.Paste, ...] = ()

    def release_keys(self) -> None:
        """The screen is ready: what was typed until now is handled next, in order, after
        what the screen asked for first (the keyboard given to the prompt comes in the
        app's turn, not at once); what is typed later goes as usual."""
        self.call_later(self._handle_held)

    async def _handle_held(self) -> None:
        held, self._held, self._keys_open = self._held, (), True
        for event in held:
            await super().on_event(event)

    async def on_event(self, event: events.Event) -> None:
        if not self._keys_open and isinstance(event, events.Key | events.Paste):
            self._held = (*self._held, event)
            return
        await super().on_event(event)
