"""Following the engine: each of its events (a `cockpit.ui.engine_messages` message, in the
order sent) updates what the screen shows, with one handler per event type. Work that
would hold the user's keys back is coalesced: frames are taken in batches, the request on
screen is shown once for however many changes came, background records are read outside
the message queue."""

from __future__ import annotations

import asyncio

from textual import on

from cockpit.api import Status
from cockpit.ui.base import focused_prompt
from cockpit.ui.engine_messages import (
    AttentionChanged,
    FramesReady,
    LinkChanged,
    PermissionChanged,
    ProblemReported,
    ResyncNeeded,
    SavingChanged,
    SessionChanged,
    StatusChanged,
)
from cockpit.ui.failures import reported
from cockpit.ui.one_line import clean_line
from cockpit.ui.overview import Overview
from cockpit.ui.requests_on_screen import PermissionsChanged, RequestsOnScreen


class EngineEvents(Overview, RequestsOnScreen):
    """One handler per engine event type, and the reads they start."""

    @on(FramesReady)
    @reported("show what the agent sent")
    async def _frames_ready(self) -> None:
        pending = self.engine_listener.take()
        if not self.is_running:  # shutting down (it may start during an await)
            return
        view = self._transcript()
        if view is None:
            return
        self.current_settings()  # how the tool cards these frames make open
        for session, frames in pending.items():
            if session == view.session:
                await view.apply_frames(frames)

    @on(StatusChanged)
    @reported("follow the sessions")
    async def _status_changed(self, message: StatusChanged) -> None:
        if not self.is_running:
            return
        event = message.event
        self._details[event.session] = event.detail
        self._follow_start(event.session, event.status)
        finished = event.status in (Status.READY, Status.EXITED, Status.ERROR, Status.CLOSED)
        view = self._transcript()
        if finished and view is not None and event.session == view.session:
            await view.finish_live()
        if event.turn_ended:
            self._turn_ended[event.session] = self.engine.now()
            self._alert(event.session, "finished a turn")
        if event.session in self.records:  # the live status is the engine's: no store read
            self._refresh_rail()
            if event.session == self.current:
                self._refresh_status()

    @on(PermissionChanged)
    @reported("follow the sessions")
    async def _permission_changed(self, message: PermissionChanged) -> None:
        if not self.is_running:
            return
        event = message.event
        session = event.request.session
        self._refresh_rail()
        view = self._transcript()
        if view is not None and session == view.session:
            self._permissions_focus |= not event.resolved
            held = focused_prompt(self.focused)
            if event.resolved and held is not None and held.request.id == event.request.id:
                self._permissions_left = True
            if not self._permissions_posted:
                self._permissions_posted = True
                self.post_message(PermissionsChanged())
        if session == self.current:
            self._refresh_status()
        if not event.resolved and session not in self._asking:
            self._asking.add(session)
            self._alert(session, f"asks: {event.request.title}")
        elif event.resolved and not self.engine.pending_count(session):
            self._asking.discard(session)

    @on(SessionChanged)
    @reported("follow the sessions")
    async def _session_changed(self, message: SessionChanged) -> None:
        if not self.is_running:
            return
        session = message.event.session
        if session == self.current or session not in self.records:
            await self._fresh(session)  # keys may act on it next: read it now
            self._refresh_rail()
            if session == self.current:
                self._refresh_status()
        else:
            self._refresh_later(session)

    @on(AttentionChanged)
    @reported("follow the sessions")
    async def _attention_changed(self) -> None:
        if self.is_running:
            self._refresh_rail()

    @on(ProblemReported)
    @reported("follow the sessions")
    async def _problem_reported(self, message: ProblemReported) -> None:
        if self.is_running:
            self.notify(
                clean_line(message.event.message), severity="error", timeout=10, markup=False
            )

    @on(SavingChanged)
    @reported("follow the sessions")
    async def _saving_changed(self, message: SavingChanged) -> None:
        if not self.is_running:
            return
        self._refresh_status()  # the status line says so while it lasts
        if message.event.problem is None:
            self.notify("The transcript is saved again.", timeout=5, markup=False)

    @on(LinkChanged)
    @reported("follow the sessions")
    async def _link_changed(self) -> None:
        if self.is_running:
            self._refresh_status()  # the status line says so while it lasts

    @on(ResyncNeeded)
    @reported("read the sessions again")
    async def _resync(self, message: ResyncNeeded) -> None:
        """Events may have been missed: every record, the rail, the status line, the
        transcript (its tail page, read afresh) and its question, read again, and the user
        told. The transcript read is the chosen session's: a switch made while the service
        was away could read nothing, and the screen still holds the session left."""
        if not self.is_running:
            return
        reason = message.event.reason
        line = clean_line(f"{reason[:1].upper()}{reason[1:]}: the screen is read again.")
        self.notify(line, timeout=5, markup=False)
        await self._reload_records()
        self._refresh_rail()
        self._refresh_status()
        view = self._transcript()
        session = self.current or (view.session if view is not None else None)
        if view is not None and session is not None:
            await view.show_session(session)
        await self._show_permissions()

    def _refresh_later(self, session: str) -> None:
        """A background session's record changed: read it outside the message queue. When
        eight turns start at once, eight reads behind eight writers would hold the user's
        keys back for a second; the rail can wait for them."""
        self._stale.add(session)
        if self._stale_reader is None or self._stale_reader.done():
            self._stale_reader = asyncio.create_task(self._read_stale())

    @reported("read a session")
    async def _read_stale(self) -> None:
        while self._stale:
            session = self._stale.pop()
            try:
                record = await self.engine.session(session)
            except KeyError:
                self.records.pop(session, None)
            else:
                if session in self.records:  # not deleted while it was read
                    self.records[session] = record
            self._refresh_rail()
            if session == self.current:
                self._refresh_status()
