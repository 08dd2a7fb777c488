"""Following the engine: its events reach the app as `cockpit.ui.engine_messages` messages,
in the order sent, and each updates what the screen shows here, one method per event type.
Work that would hold the user's keys back is coalesced: frames are taken in batches, the
request on screen is shown once for however many changes came, background records are
read outside the message queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from cockpit.api import (
    EngineAPI,
    PermissionEvent,
    ProblemEvent,
    ResyncEvent,
    SavingEvent,
    SessionEvent,
    Status,
    StatusEvent,
)
from cockpit.ui.engine_messages import EngineListener
from cockpit.ui.failures import reported
from cockpit.ui.live_settings import LiveSettings
from cockpit.ui.one_line import clean_line
from cockpit.ui.overview import Overview
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.sessions import Sessions
from cockpit.ui.shell_runs import SHELL, ShellRuns
from cockpit.ui.terminal_alerts import TerminalAlerts
from cockpit.ui.transcript import TranscriptView


class EngineFollower:
    """What the app subscribes to the engine, and what each of its events changes."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        overview: Overview,
        alerts: TerminalAlerts,
        requests: RequestsOnScreen,
        settings: LiveSettings,
        shell: ShellRuns,
    ) -> None:
        self.app = app
        """Where the events are posted, and the screen they change."""
        self._engine = engine
        self._sessions = sessions
        self._overview = overview
        self._alerts = alerts
        self._requests = requests
        self._settings = settings
        self._shell = shell
        self.listener = EngineListener(app.post_message)
        """What the app subscribes to the engine (it holds frames until they are taken)."""

    def _view(self) -> TranscriptView | None:
        """The transcript on screen; None once the app is closing (its widgets go while
        messages already posted are still handled)."""
        return self.app.query_one_optional(TranscriptView)

    @reported("show what the agent sent")
    async def frames_ready(self) -> None:
        pending = self.listener.take()
        if not self.app.is_running:  # shutting down (it may start during an await)
            return
        for session, frames in pending.items():  # the user's commands, in every session
            self._shell.follow(session, frames)
        shown = pending.get(self._sessions.current or "", ())
        if any(frame.kind == SHELL for frame in shown):  # one ran: the status line says so
            self._overview.refresh_status()
        view = self._view()
        if view is None:
            return
        self._settings.read()  # how the tool cards these frames make open
        for session, frames in pending.items():
            if session == view.session:
                await view.apply_frames(frames)

    @reported("follow the sessions")
    async def status_changed(self, event: StatusEvent) -> None:
        if not self.app.is_running:
            return
        self._overview.follow_status(event.session, event.status, event.detail)
        finished = event.status in (Status.READY, Status.EXITED, Status.ERROR, Status.CLOSED)
        view = self._view()
        if finished and view is not None and event.session == view.session:
            await view.finish_live()
        if event.turn_ended:
            self._overview.turn_ended(event.session)
            self._alerts.alert(event.session, "finished a turn")
        if event.session in self._sessions.records:  # the live status is the engine's
            self._overview.refresh_session(event.session)

    @reported("follow the sessions")
    async def permission_changed(self, event: PermissionEvent) -> None:
        if not self.app.is_running:
            return
        session = event.request.session
        self._overview.refresh_rail()
        view = self._view()
        if view is not None and session == view.session:
            self._requests.follow(event)
        if session == self._sessions.current:
            self._overview.refresh_status()
        if not event.resolved:
            self._alerts.asked(session, event.request.title)
        elif not self._engine().pending_count(session):
            self._alerts.answered_all(session)

    @reported("follow the sessions")
    async def session_changed(self, event: SessionEvent) -> None:
        if not self.app.is_running:
            return
        session = event.session
        if session == self._sessions.current or session not in self._sessions.records:
            await self._sessions.fresh(session)  # keys may act on it next: read it now
            self._overview.refresh_session(session)
        else:
            self._sessions.refresh_later(session)

    @reported("follow the sessions")
    async def attention_changed(self) -> None:
        if self.app.is_running:
            self._overview.refresh_rail()

    @reported("follow the sessions")
    async def problem_reported(self, event: ProblemEvent) -> None:
        if self.app.is_running:
            self.app.notify(clean_line(event.message), severity="error", timeout=10, markup=False)

    @reported("follow the sessions")
    async def saving_changed(self, event: SavingEvent) -> None:
        if not self.app.is_running:
            return
        self._overview.refresh_status()  # the status line says so while it lasts
        if event.problem is None:
            self.app.notify("The transcript is saved again.", timeout=5, markup=False)

    @reported("follow the sessions")
    async def link_changed(self) -> None:
        if self.app.is_running:
            self._overview.refresh_status()  # the status line says so while it lasts

    @reported("read the sessions again")
    async def resync(self, event: ResyncEvent) -> None:
        """Events may have been missed: every record, the rail, the status line, the
        transcript (its tail page, read afresh) and its question, read again, and the user
        told. The transcript read is the chosen session's: a switch made while the service
        was away could read nothing, and the screen still holds the session left."""
        if not self.app.is_running:
            return
        reason = event.reason
        line = clean_line(f"{reason[:1].upper()}{reason[1:]}: the screen is read again.")
        self.app.notify(line, timeout=5, markup=False)
        await self._sessions.reload()
        self._overview.refresh_rail()
        self._overview.refresh_status()
        view = self._view()
        session = self._sessions.current or (view.session if view is not None else None)
        if view is not None and session is not None:
            await view.show_session(session)
        await self._requests.show()
