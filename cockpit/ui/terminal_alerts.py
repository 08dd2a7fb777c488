"""Telling the user, from the app, that a session needs them: the bell, a desktop
notification when the terminal is not focused, and the window title counting the sessions
that wait (the escape sequences themselves are `cockpit.ui.alert_sequences`)."""

from __future__ import annotations

import os

from cockpit.compat.textual_private import terminal_driver
from cockpit.text.textout import session_title
from cockpit.ui.alert_sequences import notification, title_for, window_title
from cockpit.ui.base import CockpitBase
from cockpit.ui.rail import RailEntry, SessionRail, rail_title
from cockpit.ui.session_states import RailState


class TerminalAlerts(CockpitBase):
    """The bell, desktop notifications and the terminal's title."""

    def _alert(self, session: str, what: str) -> None:
        """A session needs the user: the bell, and a desktop notification when the terminal
        is not focused (a setting turns notifications off)."""
        if session == self.current and self.app_focus:
            return
        self.bell()
        if not self.app_focus and self.current_settings().notify:
            record = self.records.get(session)
            title = session_title(record) if record else "Cockpit"
            self._write_terminal(notification(title, what, in_tmux=bool(os.environ.get("TMUX"))))

    def _write_terminal(self, sequence: str) -> None:
        """Send an escape sequence to the terminal (not drawn: the driver writes it as is)."""
        driver = terminal_driver(self)
        if driver is not None and not self.is_headless:
            driver.write(sequence)
        self.sent_sequences.append(sequence)

    def _update_title(self, entries: list[RailEntry]) -> None:
        waiting = sum(1 for e in entries if e.state == RailState.NEEDS_YOU)
        unread = sum(1 for e in entries if e.state == RailState.UNREAD)
        title = title_for(waiting, unread)
        if title != self._title_shown:
            self._title_shown = title
            self._write_terminal(window_title(title))
            self.query_one(SessionRail).border_title = rail_title(waiting, unread)
