"""The base of Cockpit's dialogs, and its command palette: screens that close once.

Textual's `Screen.dismiss` runs the result callback and pops whatever screen is on top.
Two Enters (or an Enter and an Esc) sent in one burst both reach a dialog before it is
gone: the second answered twice and closed the screen below it, and with none left below,
the app died. A screen that is no longer on top ignores a second dismiss.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, TypeVar

from textual import on
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.command import CommandList, CommandPalette
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, OptionList

Result = TypeVar("Result")


def closed_already(screen: Screen[Any]) -> bool:
    """True when `screen` is not the one on top: dismissed before, or under a dialog of
    its own."""
    return screen.app.screen is not screen


class Dialog(ModalScreen[Result]):
    """A modal screen that answers and closes at most once."""

    def dismiss(self, result: Result | None = None) -> AwaitComplete:
        if closed_already(self):
            return AwaitComplete()
        return super().dismiss(result)


class Palette(CommandPalette):
    """Textual's command palette, closing at most once and deaf once closed (Enter twice
    ran the command twice and then closed the screen under it), its searches ending with
    it, and paging its list only
    once the list is laid out (PageUp right after the commands arrived raised KeyError
    inside Textual)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pagedown", "page(1)", "Next page", show=False),
        Binding("pageup", "page(-1)", "Previous page", show=False),
    ]

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
        if closed_already(self):
            event.prevent_default()
            event.stop()

    def _watch__list_visible(self) -> None:
        """Textual's own watcher, skipped once the palette is closed: a search started by a
        key typed in the same burst as Enter or Esc came back to a list no longer there,
        and the app died of it."""
        if self.query(CommandList):
            super()._watch__list_visible()

    def action_page(self, direction: int) -> None:
        """A page down (1) or up (-1) in the list of commands."""
        action = "action_page_down" if direction > 0 else "action_page_up"
        for commands in self.query(CommandList):
            with contextlib.suppress(KeyError):  # its lines are not laid out yet
                getattr(commands, action)()
