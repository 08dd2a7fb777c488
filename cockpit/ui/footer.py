"""The key bar at the bottom of the screen: Textual's `Footer`, rebuilt only when the keys it
shows change.

Textual's footer rebuilds every key widget (and restyles each one) on every bindings
signal: seven times while the app starts, and twice on a Tab that leaves the keys as they
were (a focused widget's own keys are mostly hidden ones). Here a signal whose keys equal
the ones shown rebuilds nothing."""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import ActiveBinding, Binding
from textual.screen import Screen
from textual.widgets import Footer

ShownKeys = tuple[tuple[Binding, bool, str], ...]
"""What the footer draws from a screen's active bindings: each binding (its key, action,
description, group...), whether it is enabled and its tooltip, in order."""


def shown_keys(active: Mapping[str, ActiveBinding], palette_key: str) -> ShownKeys:
    """The part of `Screen.active_bindings` the footer's keys are built from: the bindings
    it shows and the command palette's. The node a binding belongs to is left out: a key
    of the footer acts by its key, not its node."""
    return tuple(
        (entry.binding, entry.enabled, entry.tooltip)
        for key, entry in active.items()
        if entry.binding.show or key == palette_key
    )


class KeyFooter(Footer):
    """A `Footer` that skips the rebuild when the keys are unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: ShownKeys | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        keys = shown_keys(screen.active_bindings, screen.app.COMMAND_PALETTE_BINDING)
        if keys == self._shown:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._shown = keys  # Textual rebuilds for this signal, and only then
        super().bindings_changed(screen)
