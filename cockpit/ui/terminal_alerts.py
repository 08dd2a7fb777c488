"""Telling the user, from the app, that a session needs them: the bell, a desktop
notification when the terminal is not focused, and the window title counting the sessions
that wait (the escape sequences themselves are `cockpit.ui.alert_sequences`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from textual.app import App

from cockpit.compat.textual_private import terminal_driver
from cockpit.ui.alert_sequences import notification, title_for, window_title
from cockpit.ui.rail import RailEntry, SessionRail, rail_title
from cockpit.ui.session_states import RailState
from cockpit.ui.sessions import Sessions


class TerminalAlerts:
    """The bell, desktop notifications and the terminal's title."""

    def __init__(self, app: App[Any], sessions: Sessions, notify: Callable[[], bool]) -> None:
        self.app = app
        """For the bell, the terminal and whether it has the focus."""
        self._sessions = sessions
        self._notify = notify
        """Whether the settings (as they are now) want desktop notifications."""
        self._title_shown = ""
        self.sent_sequences: list[str] = []
        """Escape sequences sent to the terminal (titles, notifications), newest last."""
        self._asking: set[str] = set()
        """Sessions whose questions have rung already: the ones that come while the first
        waits do not ring again (a thousand asked at once rang a thousand bells)."""

    def alert(self, session: str, what: str) -> None:
        """A session needs the user: the bell, and a desktop notification when the terminal
        is not focused (a setting turns notifications off)."""
        if session == self._sessions.current and self.app.app_focus:
            return
        self.app.bell()
        if not self.app.app_focus and self._notify():
            title = (
                self._sessions.title_of(session) if session in self._sessions.records else "Cockpit"
            )
            self._write_terminal(notification(title, what, in_tmux=bool(os.environ.get("TMUX"))))

    def asked(self, session: str, title: str) -> None:
        """`session` asks a question: ring, unless one of its questions rang already and
        waits still."""
        if session not in self._asking:
            self._asking.add(session)
            self.alert(session, f"asks: {title}")

    def answered_all(self, session: str) -> None:
        """No question of `session` waits any more: its next one rings."""
        self._asking.discard(session)

    def _write_terminal(self, sequence: str) -> None:
        """Send an escape sequence to the terminal (not drawn: the driver writes it as is)."""
        driver = terminal_driver(self.app)
        if driver is not None and not self.app.is_headless:
            driver.write(sequence)
        self.sent_sequences.append(sequence)

    def update_title(self, entries: list[RailEntry]) -> None:
        """The window title and the rail's count the sessions that wait and the unread."""
        waiting = sum(1 for e in entries if e.state == RailState.NEEDS_YOU)
        unread = sum(1 for e in entries if e.state == RailState.UNREAD)
        title = title_for(waiting, unread)
        if title != self._title_shown:
            self._title_shown = title
            self._write_terminal(window_title(title))
            self.app.query_one(SessionRail).border_title = rail_title(waiting, unread)
