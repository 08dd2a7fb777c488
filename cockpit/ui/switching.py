"""Choosing the session on screen: from the rail, the keys, the inbox, Ctrl+G or a new
session. The choice shows at once (the rail, the status line, the composer's draft); the
transcript is read next, once, however many sessions are chosen meanwhile."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.app import App
from textual.message import Message
from textual.widgets import OptionList

from cockpit.api import AgentSpec, EngineAPI, PermissionRequest, WorktreeRequest
from cockpit.ui.composer import Composer
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.drafts import Drafts
from cockpit.ui.failures import reported, reported_to
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.live_settings import LiveSettings
from cockpit.ui.overview import Overview
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.screen_rules import focused_prompt
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.session_states import next_needing
from cockpit.ui.sessions import Sessions
from cockpit.ui.shell_rules import history_entries
from cockpit.ui.transcript import TranscriptView

SLOW_WORKTREE = 0.4
"""Seconds a worktree may take to make before the user is told it is on its way."""


class Switching:
    """The session on screen, how another one is chosen, and how a new one starts."""

    class ShowWanted(Message):
        """A session was chosen: read its transcript (the newest chosen, once)."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        parts: SwitchingParts,
    ) -> None:
        self.app = app
        """For the composer, the transcript, workers and notices."""
        self._engine = engine
        self._sessions = sessions
        self._parts = parts
        self._wanted: tuple[str, bool] | None = None
        """The session to show next, and whether the keyboard goes to it; however many are
        chosen while one is read (a held Ctrl+Down), only the newest is shown."""
        self._show_posted = False

    @property
    def showing(self) -> bool:
        """True while a session chosen waits to be shown (the keys wait for it)."""
        return self._show_posted

    def select(self, session: str, focus: bool = True) -> None:
        """Choose a session: at once the rail highlights it, the status line and the composer
        (its own draft) are its, and the engine counts it as seen; its transcript is read
        next, once, however many sessions are chosen meanwhile (a held Ctrl+Down). The
        keyboard then goes to its pending request, else to the composer (`focus=False`
        leaves it where it is: on the rail, while the user walks it)."""
        if (
            session not in self._sessions.records
            or not self.app.is_running
            or self.app.query_one_optional(Composer) is None
        ):
            return  # shutting down (the rail highlights a last time): nothing to show
        parts = self._parts
        if session != self._sessions.current:
            parts.drafts.take(session)
            if focus and self._engine().pending_count(session):
                parts.keys.hold_keys()  # until its question has the keyboard (`show_wanted`)
            self._sessions.current = session
            self._engine().show(session)
            parts.overview.refresh_rail()
            parts.overview.refresh_status()
            parts.settings.remember_session(session)
        self._wanted = (session, focus)
        if not self._show_posted:
            self._show_posted = True
            self.app.post_message(self.ShowWanted())

    async def show_wanted(self) -> None:
        """Show the session chosen last (`ShowWanted`)."""
        try:
            await self._show()
        finally:
            self._parts.keys.release_keys()  # held since the switch: now where it landed

    @reported("show the session")
    async def _show(self) -> None:
        self._show_posted = False
        wanted, self._wanted = self._wanted, None
        if wanted is None or wanted[0] != self._sessions.current:
            return
        session, focus = wanted
        # Its record changed in the background: read the current one first.
        if self._sessions.take_stale(session) and await self._sessions.fresh(session) is None:
            return
        view = self.app.query_one_optional(TranscriptView)
        if view is None:  # the app is closing
            return
        parts = self._parts
        parts.settings.read()  # how its tool cards open
        await view.show_session(session)
        composer = self.app.query_one_optional(Composer)
        if composer is None:  # the app closed while the page was read
            return
        composer.prompts.reset(history_entries(view.model))
        parts.overview.refresh_rail()
        parts.overview.refresh_status()
        await parts.requests.show()
        if focus:
            parts.requests.focus_session()

    @reported("open the session", default=True)
    async def create(
        self, agent: str | AgentSpec, folder: str, worktree: WorktreeRequest | None = None
    ) -> bool:
        """Start a new session of `agent` in `folder` (in a worktree of its own when
        `worktree` asks for one), and show it; False, and the user told why, when the engine
        refuses them (no such agent, no such folder where it runs)."""
        slow = None
        if worktree is not None:  # git checks the files out: on a big repository, seconds
            slow = self.app.set_timer(SLOW_WORKTREE, self._making_worktree)
        try:
            record = await self._engine().create_session(agent, folder, worktree=worktree)
        except (KeyError, NotADirectoryError, ValueError) as error:
            self.app.notify(
                str(error.args[0] if error.args else error), severity="error", markup=False
            )
            return False
        finally:
            if slow is not None:
                slow.stop()
        self._sessions.records[record.id] = record
        self.select(record.id)
        # A partial: a worker cancelled before it starts leaves no coroutine behind.
        work: Callable[[], object] = partial(self._start, record.id)
        self.app.run_worker(work, group="start", exit_on_error=False)
        return True

    def _making_worktree(self) -> None:
        self.app.notify("Making the worktree: git is checking out its files…", timeout=4)

    async def _start(self, session: str) -> None:
        try:
            await self._engine().start(session)
        except Exception as error:  # the error row in the transcript says why
            self.app.log.warning(f"session {session} did not start: {error}")

    def step(self, delta: int) -> None:
        """Show the session `delta` places below in the rail (above when negative)."""
        order = [record.id for record in self._sessions.ordered()]
        current = self._sessions.current
        if not order or current not in order:
            return
        self.select(order[(order.index(current) + delta) % len(order)])

    def option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id != "rail" or event.option_index != event.option_list.highlighted:
            return  # the rail has moved on since: a switch typed meanwhile is not undone
        if event.option.id and event.option.id != self._sessions.current:
            # Walking the rail shows each session; the keyboard stays on the rail.
            self.select(event.option.id, focus=False)

    def option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "rail":
            self._parts.requests.focus_session()
        elif event.option_list.id == "completion":
            self.app.query_one(Composer).accept(event.option_index)

    def inbox(self) -> None:
        """Show everything that waits on the user, across all sessions."""

        @reported_to(self.app, "answer the request")
        async def answer(request: PermissionRequest, option_id: str) -> None:
            with contextlib.suppress(KeyError):
                await self._engine().answer_permission(request.id, option_id)

        def opened(session: str | None) -> None:
            if session is not None:
                self.select(session)
            else:  # what was focused may be gone (a request answered from the inbox)
                self._parts.requests.focus_session()

        @reported_to(self.app, "answer the form", "It was not answered: try again.")
        async def answer_form(
            request: PermissionRequest, action: str, content: dict[str, Any] | None
        ) -> str | None:
            try:
                with contextlib.suppress(KeyError):  # answered meanwhile, elsewhere
                    await self._engine().answer_form(request.id, action, content)
            except ValueError as problem:  # values the engine refused: the form says why
                return str(problem)
            return None

        screen = InboxScreen(
            self._parts.overview.inbox_items, answer, answer_form, self._parts.clock
        )
        self._parts.open_screen(screen, opened)

    def next_needing(self) -> None:
        """Ctrl+G: the question this session asks, when the keyboard is not on it yet; else
        the next session that needs the user (a question first, then unread)."""
        view = self.app.query_one_optional(TranscriptView)
        if view is None:
            return
        current = self._sessions.current
        prompts = list(view.prompts.values())
        if prompts and view.session == current and focused_prompt(self.app.focused) is None:
            prompts[0].focus()
            view.scroll_to_widget(prompts[0], animate=False)
            return
        ordered = self._sessions.ordered()
        order = [record.id for record in ordered]
        states = {record.id: self._parts.overview.entry(record).state for record in ordered}
        found = next_needing(order, states, current)
        if found is None:
            self.app.notify("Nothing else needs you.", timeout=2)
        else:
            self.select(found)


@dataclass(frozen=True)
class SwitchingParts:
    """What a switch updates besides the session chosen."""

    drafts: Drafts
    keys: HeldKeys
    overview: Overview
    requests: RequestsOnScreen
    settings: LiveSettings
    open_screen: OpenScreen
    clock: Callable[[], float]
