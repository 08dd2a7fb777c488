"""Choosing the session on screen: from the rail, the keys, the inbox, Ctrl+G or a new
session. The choice shows at once (the rail, the status line, the composer's draft); the
transcript is read next, once, however many sessions are chosen meanwhile."""

from __future__ import annotations

import contextlib

from textual import on, work
from textual.message import Message
from textual.widgets import OptionList

from cockpit.api import AgentSpec, PermissionRequest
from cockpit.ui.base import focused_prompt
from cockpit.ui.composer import Composer
from cockpit.ui.drafts import Drafts
from cockpit.ui.failures import reported, reported_to
from cockpit.ui.overview import Overview
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.session_states import next_needing


class ShowWanted(Message):
    """A session was chosen: read its transcript (the newest chosen, once)."""


class SessionSwitching(Overview, Drafts, RequestsOnScreen):
    """The session on screen, how another one is chosen, and how a new one starts."""

    def select_session(self, session: str, focus: bool = True) -> None:
        """Choose a session: at once the rail highlights it, the status line and the composer
        (its own draft) are its, and the engine counts it as seen; its transcript is read
        next, once, however many sessions are chosen meanwhile (a held Ctrl+Down). The
        keyboard then goes to its pending request, else to the composer (`focus=False`
        leaves it where it is: on the rail, while the user walks it)."""
        if (
            session not in self.records
            or not self.is_running
            or self.query_one_optional(Composer) is None
        ):
            return  # shutting down (the rail highlights a last time): nothing to show
        if session != self.current:
            self._take_draft(session)
            if focus and self.engine.pending_count(session):
                self.hold_keys()  # until its question has the keyboard (`_show_wanted`)
            self.current = session
            self.engine.show(session)
            self._refresh_rail()
            self._refresh_status()
            self._remember_session()
        self._wanted = (session, focus)
        if not self._show_posted:
            self._show_posted = True
            self.post_message(ShowWanted())

    @on(ShowWanted)
    async def _show_wanted(self) -> None:
        try:
            await self._show()
        finally:
            self.release_keys()  # held since the switch: now to where the keyboard landed

    @reported("show the session")
    async def _show(self) -> None:
        self._show_posted = False
        wanted, self._wanted = self._wanted, None
        if wanted is None or wanted[0] != self.current:
            return
        session, focus = wanted
        if session in self._stale:  # its record changed in the background: current first
            self._stale.discard(session)
            if await self._fresh(session) is None:
                return
        view = self._transcript()
        if view is None:  # the app is closing
            return
        self.current_settings()  # how its tool cards open
        await view.show_session(session)
        composer = self.query_one_optional(Composer)
        if composer is None:  # the app closed while the page was read
            return
        composer.prompts.reset(b.text for b in view.model if b.kind == "user")
        self._refresh_rail()
        self._refresh_status()
        await self._show_permissions()
        if focus:
            self._focus_session()

    @reported("open the session")
    async def _create_session(self, agent: str | AgentSpec, folder: str) -> None:
        try:
            record = await self.engine.create_session(agent, folder)
        except (KeyError, NotADirectoryError) as error:
            self.notify(str(error.args[0] if error.args else error), severity="error", markup=False)
            return
        self.records[record.id] = record
        self.select_session(record.id)
        self._start(record.id)

    @work(group="start", exit_on_error=False)
    async def _start(self, session: str) -> None:
        try:
            await self.engine.start(session)
        except Exception as error:  # the error row in the transcript says why
            self.log.warning(f"session {session} did not start: {error}")

    async def new_session_with(self, agent: str) -> None:
        """Start a session with `agent` in the start folder (command palette)."""
        await self._create_session(agent, str(self.folder))

    def action_previous_session(self) -> None:
        """Show the session above in the rail."""
        self._step(-1)

    def action_next_session(self) -> None:
        """Show the session below in the rail."""
        self._step(1)

    def _step(self, delta: int) -> None:
        order = [record.id for record in self._ordered()]
        if not order or self.current not in order:
            return
        self.select_session(order[(order.index(self.current) + delta) % len(order)])

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "rail" or event.option_index != event.option_list.highlighted:
            return  # the rail has moved on since: a switch typed meanwhile is not undone
        if event.option.id and event.option.id != self.current:
            # Walking the rail shows each session; the keyboard stays on the rail.
            self.select_session(event.option.id, focus=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "rail":
            self._focus_session()
        elif event.option_list.id == "completion":
            self.query_one(Composer).accept(event.option_index)

    def action_inbox(self) -> None:
        """Show everything that waits on the user, across all sessions."""

        @reported_to(self, "answer the request")
        async def answer(request: PermissionRequest, option_id: str) -> None:
            with contextlib.suppress(KeyError):
                await self.engine.answer_permission(request.id, option_id)

        def opened(session: str | None) -> None:
            if session is not None:
                self.select_session(session)
            else:  # what was focused may be gone (a request answered from the inbox)
                self._focus_session()

        self.open_screen(InboxScreen(self.inbox_items, answer, self.clock), opened)

    def action_next_needing(self) -> None:
        """Ctrl+G: the question this session asks, when the keyboard is not on it yet; else
        the next session that needs the user (a question first, then unread)."""
        view = self._transcript()
        if view is None:
            return
        prompts = list(view.prompts.values())
        if prompts and view.session == self.current and focused_prompt(self.focused) is None:
            prompts[0].focus()
            view.scroll_to_widget(prompts[0], animate=False)
            return
        order = [record.id for record in self._ordered()]
        states = {record.id: self._entry(record).state for record in self._ordered()}
        found = next_needing(order, states, self.current)
        if found is None:
            self.notify("Nothing else needs you.", timeout=2)
        else:
            self.select_session(found)
