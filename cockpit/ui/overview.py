"""What the rail, the status line and the open inbox show, refreshed from the session
records and the engine's live state (never from a store read: the live state is the
engine's, so a refresh costs no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.message import Message
from textual.timer import Timer

from cockpit.api import EngineAPI, Status, is_run
from cockpit.text.textout import session_title
from cockpit.ui.one_line import clean_line
from cockpit.ui.rail import RailEntry, SessionRail
from cockpit.ui.screens.inbox import InboxItem, InboxScreen
from cockpit.ui.session_states import RailState, rail_state
from cockpit.ui.sessions import Sessions
from cockpit.ui.status_line import StatusLine
from cockpit.ui.status_rules import link_parts, status_parts
from cockpit.ui.terminal_alerts import TerminalAlerts
from cockpit.ui.worktree_statuses import WorktreeStatuses
from store import SessionRecord

STATE_VARIABLES = {
    RailState.NEEDS_YOU: "status-needs-you",
    RailState.ERROR: "status-error",
    RailState.UNREAD: "status-unread",
    RailState.WORKING: "status-working",
    RailState.STARTING: "status-starting",
    RailState.IDLE: "status-idle",
    RailState.CLOSED: "status-closed",
}
"""The theme variable that colours each state in the rail."""
CURRENT_VARIABLE = "primary"
"""The theme variable that colours the mark of the session on screen (the lead colour,
as the rail's border when it has the keyboard)."""


class Overview:
    """The rail, the status line, the window title and the inbox's list, kept current."""

    class InboxChanged(Message):
        """What waits for the user changed while the inbox is open: list it again, once."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        alerts: TerminalAlerts,
        clock: Callable[[], float],
        worktrees: WorktreeStatuses,
        command_running: Callable[[str], bool] = lambda session: False,
        reading_input: Callable[[str], bool] = lambda session: False,
    ) -> None:
        self.app = app
        """For the rail, the status line, the inbox and the second timer."""
        self._engine = engine
        self._sessions = sessions
        self._alerts = alerts
        self._clock = clock
        self._worktrees = worktrees
        self._command_running = command_running
        """Whether a `!command` runs in a session (the status line says so)."""
        self._reading_input = reading_input
        """Whether what runs there reads the lines the user sends (an agent's login)."""
        self._details: dict[str, str] = {}
        """The last thing each session's status said (why an agent failed to start...)."""
        self._turn_ended: dict[str, float] = {}
        """When each session's last turn ended, by the engine's clock (for the inbox)."""
        self._starting_since: dict[str, float] = {}
        """When each session whose agent is starting began to, by the app's clock (or when
        this screen first saw it starting)."""
        self._starting_timer: Timer | None = None
        """Counts the seconds on the status line, only while some agent starts."""
        self._inbox_posted = False

    def entry(self, record: SessionRecord) -> RailEntry:
        """What the rail shows of `record`."""
        engine = self._engine()
        pending = engine.pending_count(record.id)
        state = rail_state(
            engine.status(record.id),
            record.status,
            pending,
            engine.unread(record.id),
            record.id == self._sessions.current,
        )
        return RailEntry(
            record.id,
            state,
            clean_line(session_title(record)),  # an agent may name it with line breaks
            record.agent,
            record.cwd,
            max(self._clock() - record.updated, 0),
            is_run(record),
            record.id == self._sessions.current,
            self._worktrees.words(record.id),
        )

    def restyle_rail(self) -> None:
        """Colour the rail's states from the theme's variables."""
        variables = self.app.get_css_variables()
        rail = self.app.query_one(SessionRail)
        rail.set_state_colours(
            {state: variables.get(name, "") for state, name in STATE_VARIABLES.items()},
            variables.get(CURRENT_VARIABLE, ""),
        )
        rail.restyle()

    def refresh_rail(self) -> None:
        if not self.app.is_running:  # shutting down after an await: the rail may be gone
            return
        rail = self.app.query_one(SessionRail)
        if not rail.styled:
            self.restyle_rail()
        entries = [self.entry(record) for record in self._sessions.ordered()]
        rail.show(entries, self._sessions.current)
        self._alerts.update_title(entries)
        self._refresh_inbox()

    def _refresh_inbox(self) -> None:
        """The inbox, when it is open, follows what the rail shows (requests asked and
        answered, turns finished and read), so it never needs reopening; it is listed
        again once for however many changes come meanwhile."""
        if isinstance(self.app.screen, InboxScreen) and not self._inbox_posted:
            self._inbox_posted = True
            self.app.post_message(self.InboxChanged())

    def inbox_changed(self) -> None:
        """List the open inbox again (`InboxChanged`)."""
        self._inbox_posted = False
        if isinstance(self.app.screen, InboxScreen):
            self.app.screen.refresh_items()

    def refresh_status(self) -> None:
        if not self.app.is_running:
            return
        engine = self._engine()
        status = self.app.query_one("#status", StatusLine)
        offline = link_parts(engine.link_problem, engine.service_stopped is not None)
        record = self._sessions.records.get(self._sessions.current or "")
        if record is None:
            status.show(offline)
            return
        spec = engine.agent_of(record)
        waiting = engine.pending_count(record.id)
        live = engine.status(record.id)
        detail = self._details.get(record.id, "")
        saving = engine.saving_problem
        starting = self._starting_for(record.id, live)
        running = self._command_running(record.id)
        reading = self._reading_input(record.id)
        parts = status_parts(
            record,
            spec.label,
            live,
            waiting,
            detail,
            saving,
            starting,
            command_running=running,
            reading_input=reading,
        )
        status.show([*offline, *parts])

    def refresh_session(self, session: str) -> None:
        """`session` changed: the rail, and the status line when it is on screen."""
        self.refresh_rail()
        if session == self._sessions.current:
            self.refresh_status()

    def follow_status(self, session: str, live: str, detail: str) -> None:
        """A session's live status changed: what it said, and whether its agent began to
        start (the count begins now) or stopped starting."""
        self._details[session] = detail
        if live == Status.STARTING:
            self._starting_since[session] = self._clock()
        else:
            self._starting_since.pop(session, None)
        self._count_starts()

    def turn_ended(self, session: str) -> None:
        """`session`'s turn ended now (the inbox lists it from then; its worktree's state
        is read again)."""
        self._turn_ended[session] = self._engine().now()
        self._worktrees.refresh(session)

    @property
    def counting_starts(self) -> bool:
        """True while the status line ticks the seconds of an agent starting."""
        return self._starting_timer is not None

    def starting(self) -> dict[str, float]:
        """When each session whose agent is starting began to (a copy)."""
        return dict(self._starting_since)

    def _starting_for(self, session: str, live: str) -> float | None:
        """Seconds the session's agent has been starting; None when it is not starting. A
        start this screen did not see begin (it attached since) counts from now."""
        if live != Status.STARTING:
            return None
        if session not in self._starting_since:
            self._starting_since[session] = self._clock()
            self._count_starts()
        return self._clock() - self._starting_since[session]

    def _count_starts(self) -> None:
        """Tick once a second while some agent starts, and not at all otherwise."""
        if self._starting_since and self._starting_timer is None:
            self._starting_timer = self.app.set_interval(1, self._tick_starts)
        elif not self._starting_since and self._starting_timer is not None:
            self._starting_timer.stop()
            self._starting_timer = None

    def _tick_starts(self) -> None:
        """A second more for every agent starting, on the status line of the one shown."""
        for session in list(self._starting_since):  # a status change missed: no count
            if self._engine().status(session) != Status.STARTING:
                del self._starting_since[session]
        self._count_starts()
        if self._sessions.current in self._starting_since:
            self.refresh_status()

    def inbox_items(self) -> list[InboxItem]:
        """Every pending request and every finished-unread session, oldest first."""
        items = [
            InboxItem(r.session, self._sessions.title_of(r.session), r.created, r)
            for r in self._engine().pending_permissions()
        ]
        for record in self._sessions.ordered():
            if self.entry(record).state == RailState.UNREAD:
                ended = self._turn_ended.get(record.id, record.updated)
                items.append(InboxItem(record.id, session_title(record), ended))
        return sorted(items, key=lambda item: item.since)
