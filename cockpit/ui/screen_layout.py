"""The screen's layout and where the keyboard moves: the rail narrows or hides (by itself on
a narrow terminal, or with Ctrl+B), Tab walks a
focus chain with the prompt just before the transcript, and the transcript says when new
output is below."""

from __future__ import annotations

from typing import Any

from textual.app import App

from cockpit.ui.composer import Composer
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.rail import SessionRail
from cockpit.ui.rail_visibility import choice_after_toggle, rail_shown
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.transcript import TranscriptView
from cockpit.ui.welcome import PLACEHOLDER, Welcome

NARROW = 100
"""Below this many columns the rail shows glyphs and titles only."""


class ScreenLayout:
    """The width's effects, the rail's visibility, the focus chain, and help."""

    def __init__(self, app: App[Any], open_screen: OpenScreen) -> None:
        self.app = app
        """The screen laid out."""
        self._open_screen = open_screen
        self._rail_choice: bool | None = None
        """Whether the user's Ctrl+B keeps the rail shown or hidden against what the width
        would do (None: the width decides)."""

    def apply_width(self, width: int) -> None:
        """Narrow the rail below `NARROW` columns, and show or hide it as the width and the
        user's choice say (`rail_shown`)."""
        rail = self.app.query_one_optional(SessionRail)
        if rail is None:  # shutting down
            return
        narrow = width < NARROW
        self.app.set_class(narrow, "-narrow")
        if rail.compact != narrow:
            rail.compact = narrow
            rail.restyle()
        self._show_rail(rail, rail_shown(width, self._rail_choice))

    def toggle_rail(self) -> None:
        """Show or hide the session rail (Ctrl+B)."""
        width = self.app.size.width
        self._rail_choice = choice_after_toggle(width, self._rail_choice)
        self._show_rail(self.app.query_one(SessionRail), rail_shown(width, self._rail_choice))

    def _show_rail(self, rail: SessionRail, shown: bool) -> None:
        """Show or hide the rail; a rail hidden with the keyboard in it gives it to the
        prompt (Up and Down would otherwise switch sessions out of sight)."""
        rail.display = shown
        if not shown and rail.has_focus:
            composer = self.app.query_one_optional(Composer)
            if composer is not None:
                composer.focus()

    async def jump_end(self) -> None:
        """Scroll to the newest output."""
        await self.app.query_one(TranscriptView).jump_to_end()

    def follow_output(self, session: str) -> None:
        """A prompt was sent in `session`: on screen, the transcript follows the newest
        output again."""
        view = self.app.query_one_optional(TranscriptView)
        if view is not None and view.session == session:
            view.follow_output()

    def show_welcome(self, blank: bool, agent: str | None) -> None:
        """Show the welcome (and the prompt's placeholder) while the session on screen has
        no message; `agent` runs it."""
        welcome = self.app.query_one_optional(Welcome)
        composer = self.app.query_one_optional(Composer)
        if welcome is None or composer is None:  # shutting down
            return
        if blank:
            welcome.show_for(agent)
        welcome.display = blank
        composer.placeholder = PLACEHOLDER if blank else ""

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
