"""The base of Cockpit's dialogs, and its command palette: screens that close once.

Textual's `Screen.dismiss` runs the result callback and pops whatever screen is on top.
Two Enters (or an Enter and an Esc) sent in one burst both reach a dialog before it is
gone: the second answered twice and closed the screen below it, and with none left below,
the app died. A screen that is no longer on top ignores a second dismiss.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual.await_complete import AwaitComplete
from textual.command import CommandPalette
from textual.screen import ModalScreen, Screen

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
    """Textual's command palette, closing at most once (Enter twice ran the command and
    then closed the screen under it)."""

    def dismiss(self, result: Any = None) -> AwaitComplete:
        if closed_already(self):
            return AwaitComplete()
        return super().dismiss(result)
