"""The screen's layout and where the keyboard moves: the rail narrows or hides, Tab walks a
focus chain with the prompt just before the transcript, and the transcript says when new
output is below."""

from __future__ import annotations

from typing import Any

from cockpit.ui.base import CockpitBase
from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.transcript import TranscriptView

NARROW = 100
"""Below this many columns the rail shows glyphs and titles only."""


class ScreenLayout(CockpitBase):
    """The width's effects, the rail's visibility, the focus chain, and help."""

    def on_resize(self, event: Any) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        rail = self.query_one_optional(SessionRail)
        if rail is None:  # shutting down
            return
        narrow = width < NARROW
        self.set_class(narrow, "-narrow")
        if rail.compact != narrow:
            rail.compact = narrow
            rail.restyle()

    def action_toggle_rail(self) -> None:
        """Show or hide the session rail."""
        rail = self.query_one(SessionRail)
        rail.display = not rail.display

    async def action_jump_end(self) -> None:
        """Scroll to the newest output."""
        await self.query_one(TranscriptView).jump_to_end()

    def on_transcript_view_unseen(self, message: TranscriptView.Unseen) -> None:
        for line in self.query("#new-output"):  # none left at shutdown
            line.display = message.unseen

    def action_focus_next(self) -> None:
        """Tab: the screen's focus chain with the prompt just before the transcript."""
        self._focus_step(1)

    def action_focus_previous(self) -> None:
        """Shift+Tab: back along the same chain (the prompt itself uses it for modes)."""
        self._focus_step(-1)

    def _focus_step(self, step: int) -> None:
        """Tab from the prompt reaches the transcript at once and Shift+Tab comes back; a
        bubble focused in the transcript counts as the transcript (they are not in the
        chain: Up and Down move between them)."""
        screen = self.screen
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

    def action_help(self) -> None:
        """Show every key."""
        self.open_screen(HelpScreen())
