"""Keys typed while the keyboard has nowhere to land yet are held, then handled in order.

From launch to a screen with a session in it takes a moment (Python's start, the store, a
service to reach). The terminal delivers what was typed meanwhile as soon as Textual reads
it, when no prompt is there yet: Textual gave the keyboard to the first widget it could
(the rail), and the keys were lost. Likewise a switch to a session with a question waiting
(Ctrl+G, then 1 to answer it): the question is shown, and takes the keyboard, only once
the session's transcript is read, and the 1 typed meanwhile went to the prompt. Until the
keyboard has landed such keys are held, and then handled in the order typed, as if they
had come just then.

An Enter typed before Cockpit has the terminal (while Python starts) arrives as a new line:
the terminal, not yet in raw mode, turns it into one. The prompt then waits, whole, for
an Enter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

from textual import events
from textual.message import Message


class HeldKeys:
    """Holds the keys (and pastes) typed until the keyboard has landed: from the start
    until the screen is ready, and from `hold_keys` until `release_keys`. The app hands
    each event to `held` first; what is let go goes to `handle`, the app's own handling."""

    def __init__(
        self,
        handle: Callable[[events.Event], Awaitable[None]],
        post_message: Callable[[Message], object],
        call_later: Callable[..., Any],
    ) -> None:
        self._handle = handle
        self._post_message = post_message
        self._call_later = call_later
        self._holding = True
        self._held: tuple[events.Key | events.Paste, ...] = ()
        self._ahead = 0
        """How many keys at the front of `_held` were handed back by a widget
        (`hold_ahead`)."""
        self._holds = 0
        """How many holds have begun: a release is for the hold it was asked in."""

    @property
    def holding(self) -> bool:
        """True while what is typed is held (a hold not released yet)."""
        return self._holding

    def hold_keys(self) -> None:
        """Hold what is typed from now until `release_keys`."""
        if not self._holding:
            self._holding, self._ahead, self._holds = True, 0, self._holds + 1

    def hold_ahead(self, key: str, character: str | None) -> None:
        """A key a widget got after it let the keyboard go (a question answered by the key
        before it, in one burst): it was sent there before the hold began, so it goes ahead
        of every key held since, after those handed back before it."""
        event = events.Key(key, character)
        if not self._holding:
            self._post_message(event)
            return
        held = self._held
        self._held = (*held[: self._ahead], event, *held[self._ahead :])
        self._ahead += 1

    def release_keys(self) -> None:
        """The keyboard has landed: what was typed until now is handled next, in order,
        after what the screen asked for first (a `focus()` takes effect in the app's turn,
        not at once); what is typed later goes as usual."""
        if self._holding:
            self._call_later(self._handle_held, self._holds)

    async def _handle_held(self, hold: int) -> None:
        if hold != self._holds or not self._holding:
            return  # released already, or held again since: that hold's release comes
        self._holding, self._ahead = False, 0
        while self._held and not self._holding:  # a held key may begin another hold
            event, self._held = self._held[0], self._held[1:]
            await self._handle(event)

    def held(self, event: events.Event) -> bool:
        """True when `event` is a key typed while holding: it is kept, to be handled later.
        (A key on its way back up goes on: Textual's own.)"""
        typed = isinstance(event, events.Key | events.Paste) and not event.is_forwarded
        if typed and self._holding:
            self._held = (*self._held, cast(events.Key | events.Paste, event))
            return True
        return False
