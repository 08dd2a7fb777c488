"""The base of Cockpit's dialogs, and its command palette: screens that close once.

Textual's `Screen.dismiss` runs the result callback and pops whatever screen is on top.
Two Enters (or an Enter and an Esc) sent in one burst both reach a dialog before it is
gone: the second answered twice and closed the screen below it, and with none left below,
the app died. A screen that is no longer on top ignores a second dismiss.

Esc closes a dialog as it arrives (a priority binding): as a screen binding it ran only
once the key had bubbled up, after the keys typed behind it had acted. Esc then Enter in
one burst made the session the Esc had cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from textual import events, on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.command import CommandInput, CommandList, CommandPalette
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList, Select
from textual.worker import Worker

from cockpit.ui.keys_in_order import ran_own_binding

Result = TypeVar("Result")

OpenScreen = Callable[[Screen[Any], Any], Awaitable[Any] | None]
"""How a component opens a dialog: the screen, and what to do with its answer. It returns
what waits until the dialog is mounted (None when the same one was open already)."""


def closed_already(screen: Screen[Any]) -> bool:
    """True when `screen` is not the one on top (dismissed before, or under a dialog of
    its own), or is a dialog an Esc closes once it is up."""
    return screen.app.screen is not screen or (isinstance(screen, Dialog) and screen.closing)


class Dialog(ModalScreen[Result]):
    """A modal screen that answers and closes at most once. Its content is one container
    `#dialog` (a box in the middle of the screen: where the screen goes is the app's
    rule for every modal screen, Textual's command palette too)."""

    DEFAULT_CSS = """
    Dialog #dialog {
        width: 72;
        max-width: 100%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: round $border;
        background: $surface;
    }
    Dialog #dialog .dialog-title {
        text-style: bold;
        margin-bottom: 1;
    }
    Dialog #dialog OptionList {
        height: auto;
        max-height: 10;
    }
    Dialog #dialog .buttons {
        height: auto;
        margin-top: 1;
    }
    Dialog #dialog Button {
        margin-right: 1;
    }
    Dialog #dialog .question {
        width: 1fr;  /* a long question wraps inside the dialog */
    }
    Dialog #dialog .hint {
        color: $text-muted;
        margin-top: 1;
    }
    """

    closing = False
    """Esc came before the dialog was up: it closes once it is, and acts on nothing more."""

    def dismiss(self, result: Result | None = None) -> AwaitComplete:
        if closed_already(self):
            return AwaitComplete()
        return super().dismiss(result)

    def action_close(self, result: Result | None = None) -> None:
        """Esc (`escape`): close with `result`. One typed as the dialog opens waits until
        it is up: a screen gone before its mount ended takes the app down with it."""
        if self.is_mounted:
            self.dismiss(result)
        elif not self.closing:
            self.closing = True
            self.call_later(self._close_up, result)

    def _close_up(self, result: Result | None) -> None:
        if self.app.screen is self:
            super().dismiss(result)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is the focused widget's own while it has a use for it (an open list of a
        `Select` closes, the dialog stays)."""
        if action == "close":
            return not escape_wanted_below(self)
        return True


def escape(description: str, result: str = "None") -> Binding:
    """A dialog's Esc binding: it closes with `result` as the key arrives."""
    return Binding("escape", f"close({result})", description, priority=True)


def escape_wanted_below(screen: Screen[Any]) -> bool:
    """True when Esc has a use where the keyboard is: the open list of a `Select`."""
    focused = screen.focused
    if focused is None:
        return False
    return any(isinstance(node, Select) and node.expanded for node in focused.ancestors_with_self)


class PaletteInput(CommandInput):
    """The palette's search field, its editing keys acting in the order typed (as a
    `Field`'s: a Widget mixin cannot share it, Textual sets `can_focus` per class)."""

    async def on_key(self, event: events.Key) -> None:
        await ran_own_binding(self, event)


class Palette(CommandPalette):
    """Textual's command palette, closing at most once and deaf once closed (Enter twice
    ran the command twice and then closed the screen under it), its searches ending with
    it, paging its list only once the list is laid out (PageUp right after the commands
    arrived raised KeyError inside Textual), its search field's keys in typed order, and
    an Enter typed before the search for the query ended choosing from what it found."""

    enter_waiting = False
    """Enter was pressed while a search ran: it chooses once that search ends."""

    def compose(self) -> ComposeResult:
        """Textual's palette, its search field one whose editing keys keep their order."""
        for widget in super().compose():
            if type(widget) is CommandInput:
                widget = PaletteInput(placeholder=widget.placeholder, select_on_focus=False)
            yield widget

    def dismiss(self, result: Any = None) -> AwaitComplete:
        if closed_already(self):
            return AwaitComplete()
        self.workers.cancel_node(self)  # a search still under way would fill a list now gone
        return super().dismiss(result)

    @on(Input.Changed)
    @on(Input.Submitted)
    @on(OptionList.OptionSelected)
    def _once_closed(self, event: Message) -> None:
        """Keys typed in the same burst as the Enter that chose a command reach the palette
        after it closed: an Enter ran the command again (three Enters made three sessions)
        and a letter started a search. Once closed, Textual's own handlers never see them."""
        if closed_already(self) or (self.enter_waiting and isinstance(event, Input.Changed)):
            event.prevent_default()
            event.stop()

    @on(Input.Submitted)
    def _after_the_search(self, event: Input.Submitted) -> None:
        """Enter typed in the burst that typed the query chose from the list found before
        (for the query's first letters, or the commands on open): "theme" then Enter ran
        whatever came first. While a search runs, Enter waits for it; the keys after it
        in the burst are dropped, as once the palette is closed."""
        if closed_already(self) or not self.searching():
            return
        self.enter_waiting = True
        event.prevent_default()
        event.stop()

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The search an Enter waits for ended: Enter again, now on what it found."""
        if self.enter_waiting and not self.searching() and not closed_already(self):
            self.enter_waiting = False
            await self.query_one(CommandInput).action_submit()

    def searching(self) -> bool:
        """Whether a search of the palette's is still under way."""
        return any(worker.node is self and not worker.is_finished for worker in self.app.workers)

    def _watch__list_visible(self) -> None:
        """Textual's own watcher, skipped once the palette is closed: a search started by a
        key typed in the same burst as Enter or Esc came back to a list no longer there,
        and the app died of it. (Private to Textual: named in
        `cockpit.compat.textual_private.OVERRIDDEN`, like the action below.)"""
        if self.query(CommandList):
            super()._watch__list_visible()

    def _action_command_list(self, action: str) -> None:
        """Textual's own action behind the palette's list keys, doing nothing instead of
        raising KeyError when PageUp or PageDown comes before the list is laid out (as
        it does right after the commands arrive)."""
        with contextlib.suppress(KeyError):
            super()._action_command_list(action)
