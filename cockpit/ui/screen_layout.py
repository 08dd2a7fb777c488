"""The screen's layout and where the keyboard moves: the rail narrows or hides, Tab walks a
focus chain with the prompt just before the transcript, and the transcript says when new
output is below."""

from __future__ import annotations

from typing import Any

from textual.app import App

from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.switching import OpenScreen
from cockpit.ui.transcript import TranscriptView

NARROW = 100
"""Below this many columns the rail shows glyphs and titles only."""


class ScreenLayout:
    """The width's effects, the rail's visibility, the focus chain, and help."""

    def __init__(self, app: App[Any], open_screen: OpenScreen) -> None:
        self.app = app
        """The screen laid out."""
        self._open_screen = open_screen

    def apply_width(self, width: int) -> None:
        """Narrow the rail below `NARROW` columns."""
        rail = self.app.query_one_optional(SessionRail)
        if rail is None:  # shutting down
            return
        narrow = width < NARROW
        self.app.set_class(narrow, "-narrow")
        if rail.compact != narrow:
            rail.compact = narrow
            rail.restyle()

    def toggle_rail(self) -> None:
        """Show or hide the session rail."""
        rail = self.app.query_one(SessionRail)
        rail.display = not rail.display

    async def jump_end(self) -> None:
        """Scroll to the newest output."""
        await self.app.query_one(TranscriptView).jump_to_end()

    def show_unseen(self, unseen: bool) -> None:
        """Say, or stop saying, that new output is below."""
        for line in self.app.query("#new-output"):  # none left at shutdown
            line.display = unseen

    def focus_step(self, step: int) -> None:
        """Tab from the prompt reaches the transcript at once and Shift+Tab comes back; a
        bubble focused in the transcript counts as the transcript (they are not in the
        chain: Up and Down move between them)."""
        screen = self.app.screen
        chain = screen.focus_chain
        transcript = screen.query_one_optional(TranscriptView)
        composer = screen.query_one_optional(Composer)
        focused = screen.focused
        if transcript is not None and composer is not None and focused is not None:
            if transcript in focused.ancestors:
                focused = transcript
            if transcript in chain and composer in chain and focused in chain:
                chain.remove(composer)
                chain.insert(chain.index(transcript), composer)
                chain[(chain.index(focused) + step) % len(chain)].focus()
                return
        if step > 0:
            screen.focus_next()
        else:
            screen.focus_previous()

    def help(self, detaches: bool) -> None:
        """Show every key (Ctrl+Q as it acts: detach, or quit when `detaches` is False)."""
        self._open_screen(HelpScreen(detaches), None)
