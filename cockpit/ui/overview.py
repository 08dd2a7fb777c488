"""What the rail, the status line and the open inbox show, refreshed from the session
records and the engine's live state (never from a store read: the live state is the
engine's, so a refresh costs no I/O)."""

from __future__ import annotations

from textual import on
from textual.message import Message

from cockpit.api import Status, is_run
from cockpit.text.textout import session_title
from cockpit.ui.one_line import clean_line
from cockpit.ui.rail import RailEntry, SessionRail
from cockpit.ui.screens.inbox import InboxItem, InboxScreen
from cockpit.ui.session_states import RailState, rail_state
from cockpit.ui.status_line import StatusLine
from cockpit.ui.status_rules import link_parts, status_parts
from cockpit.ui.terminal_alerts import TerminalAlerts
from store import SessionRecord


class InboxChanged(Message):
    """What waits for the user changed while the inbox is open: list it again, once."""


class Overview(TerminalAlerts):
    """The rail, the status line, the window title and the inbox's list, kept current."""

    def _entry(self, record: SessionRecord) -> RailEntry:
        pending = self.engine.pending_count(record.id)
        state = rail_state(
            self.engine.status(record.id),
            record.status,
            pending,
            self.engine.unread(record.id),
            record.id == self.current,
        )
        return RailEntry(
            record.id,
            state,
            clean_line(session_title(record)),  # an agent may name it with line breaks
            record.agent,
            record.cwd,
            max(self.clock() - record.updated, 0),
            is_run(record),
        )

    def _refresh_rail(self) -> None:
        if not self.is_running:  # shutting down after an await: the rail may be gone
            return
        rail = self.query_one(SessionRail)
        if not rail._styles:
            self._restyle_rail()
        entries = [self._entry(record) for record in self._ordered()]
        rail.show(entries, self.current)
        self._update_title(entries)
        self._refresh_inbox()

    def _refresh_inbox(self) -> None:
        """The inbox, when it is open, follows what the rail shows (requests asked and
        answered, turns finished and read), so it never needs reopening; it is listed
        again once for however many changes come meanwhile."""
        if isinstance(self.screen, InboxScreen) and not self._inbox_posted:
            self._inbox_posted = True
            self.post_message(InboxChanged())

    @on(InboxChanged)
    def _inbox_changed(self) -> None:
        self._inbox_posted = False
        if isinstance(self.screen, InboxScreen):
            self.screen.refresh_items()

    def _refresh_status(self) -> None:
        if not self.is_running:
            return
        status = self.query_one("#status", StatusLine)
        offline = link_parts(self.engine.link_problem, self.engine.service_stopped is not None)
        record = self.records.get(self.current or "")
        if record is None:
            status.show(offline)
            return
        spec = self.engine.agent_of(record)
        waiting = self.engine.pending_count(record.id)
        live = self.engine.status(record.id)
        detail = self._details.get(record.id, "")
        saving = self.engine.saving_problem
        starting = self._starting_for(record.id, live)
        parts = status_parts(record, spec.label, live, waiting, detail, saving, starting)
        status.show([*offline, *parts])

    def _follow_start(self, session: str, live: str) -> None:
        """A session's live status changed: its agent began to start (the count begins
        now), or stopped starting."""
        if live == Status.STARTING:
            self._starting_since[session] = self.clock()
        else:
            self._starting_since.pop(session, None)
        self._count_starts()

    def _starting_for(self, session: str, live: str) -> float | None:
        """Seconds the session's agent has been starting; None when it is not starting. A
        start this screen did not see begin (it attached since) counts from now."""
        if live != Status.STARTING:
            return None
        if session not in self._starting_since:
            self._starting_since[session] = self.clock()
            self._count_starts()
        return self.clock() - self._starting_since[session]

    def _count_starts(self) -> None:
        """Tick once a second while some agent starts, and not at all otherwise."""
        if self._starting_since and self._starting_timer is None:
            self._starting_timer = self.set_interval(1, self._tick_starts)
        elif not self._starting_since and self._starting_timer is not None:
            self._starting_timer.stop()
            self._starting_timer = None

    def _tick_starts(self) -> None:
        """A second more for every agent starting, on the status line of the one shown."""
        for session in list(self._starting_since):  # a status change missed: no count
            if self.engine.status(session) != Status.STARTING:
                del self._starting_since[session]
        self._count_starts()
        if self.current in self._starting_since:
            self._refresh_status()

    def inbox_items(self) -> list[InboxItem]:
        """Every pending request and every finished-unread session, oldest first."""
        items = [
            InboxItem(r.session, self._title_of(r.session), r.created, r)
            for r in self.engine.pending_permissions()
        ]
        for record in self._ordered():
            if self._entry(record).state == RailState.UNREAD:
                ended = self._turn_ended.get(record.id, record.updated)
                items.append(InboxItem(record.id, session_title(record), ended))
        return sorted(items, key=lambda item: item.since)
