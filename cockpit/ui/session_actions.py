"""What the user does to sessions with keys and the palette: start, rename, close and
delete one; cancel a turn (Esc, Ctrl+C), copy a reply, and quit, asking first when
something would be lost."""

from __future__ import annotations

import time

from textual import work

from cockpit.api import DEFAULT_AGENT, Status
from cockpit.text.textout import session_title
from cockpit.ui.bubbles import AgentBubble, BubbleWidget
from cockpit.ui.composer import Composer
from cockpit.ui.failures import reported, reported_to
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.new_session import NewSessionChoice, NewSessionScreen
from cockpit.ui.screens.questions import ConfirmScreen, RenameScreen
from cockpit.ui.session_states import quit_question
from cockpit.ui.switching import SessionSwitching
from store import SessionBusy

INTERRUPT_AGAIN = 2.0
"""Seconds within which a second Ctrl+C (with nothing to cancel or clear) quits."""

TURN_RUNNING = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING})


class SessionActions(SessionSwitching):
    """The session actions the keys and the command palette run."""

    async def action_quit(self) -> None:
        """Ctrl+Q: attached to the service, detach at once (the agents go on, turns
        complete, questions wait for the next attach). With the engine in this process
        (`--local`), quit, after asking when a turn runs or a question waits: every agent
        stops with it."""
        if self.engine.detaches:
            self.exit()
            return
        question = quit_question(
            self._running_turns(), self.engine.pending_count(), self.engine.saving_problem
        )
        if question is None:
            self.exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.open_screen(ConfirmScreen(question, yes="Quit", no="Stay"), answered)

    def _running_turns(self) -> int:
        busy = (Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING)
        return sum(self.engine.status(session) in busy for session in self.records)

    def action_new_session(self) -> None:
        """Pick an agent and a folder for a new session; the agent of the session on screen
        is highlighted (else the one Cockpit was opened with), so Ctrl+N Enter starts
        another session like it."""
        record = self.records.get(self.current or "")
        default = record.agent if record is not None else self.agent or DEFAULT_AGENT

        async def chosen(choice: NewSessionChoice | None) -> None:
            if choice is not None:
                await self._create_session(choice.agent, choice.folder)

        def installed(name: str) -> bool:
            return any(info.spec.name == name and info.installed for info in self.engine.agents())

        screen = NewSessionScreen(self.engine.agents(), str(self.folder), default, installed)
        self.open_screen(screen, chosen)

    def action_rename_session(self, session: str | None = None) -> None:
        """Give `session` (else the session on screen) a title."""
        record = self.records.get(session or self.current or "")
        if record is None:
            return

        async def renamed(title: str | None) -> None:
            if title:
                await self.engine.rename(record.id, title)

        self.open_screen(RenameScreen(clean_line(session_title(record))), renamed)

    def action_close_session(self) -> None:
        """Stop the agent of the session on screen; its transcript stays. The stop runs
        beside the screen, which takes keys meanwhile: it may last seconds (a turn
        cancelled, an agent given its grace to exit)."""
        if self.current is not None:
            self._close_session(self.current)

    @work(group="stop", exit_on_error=False)
    @reported("close the session")
    async def _close_session(self, session: str) -> None:
        await self.engine.stop(session)
        self.notify("Session closed: its agent stopped. A prompt starts it again.", timeout=4)

    def action_delete_session(self) -> None:
        """Delete the session on screen, after asking."""
        record = self.records.get(self.current or "")
        if record is None:
            return

        @reported_to(self, "delete the session")
        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                await self.engine.delete(record.id)
            except SessionBusy as error:  # another Cockpit is writing this session
                self.notify(clean_line(str(error)), severity="error", markup=False)
                return
            self.records.pop(record.id, None)
            self._drafts.pop(record.id, None)
            self.current = None
            if self.records:
                self.select_session(self._ordered()[0].id)
            else:
                await self._create_session(self._opened_with(), str(self.folder))

        self.open_screen(
            ConfirmScreen(f"Delete “{clean_line(session_title(record))}” and its transcript?"),
            confirmed,
        )

    @reported("cancel the turn")
    async def action_escape(self) -> None:
        """Esc wherever the keyboard is (the transcript, a bubble, the rail): cancel the
        running turn; with none running, back to the composer (or the pending request).
        Dialogs, popups and the composer's menu take their Esc before this one."""
        session = self.current
        if session is not None and self.engine.status(session) in TURN_RUNNING:
            await self.action_cancel_turn()
        else:
            self._focus_session()

    @reported("cancel the turn")
    async def action_cancel_turn(self, session: str | None = None) -> None:
        """Cancel the running turn of `session`, else of the session on screen (the status
        line says so until the agent has ended it)."""
        session = session or self.current
        if session is not None:
            await self.engine.cancel(session)

    async def on_composer_cancel_requested(self, message: Composer.CancelRequested) -> None:
        await self.action_cancel_turn(message.session)

    @reported("cancel the turn")
    async def action_interrupt(self) -> None:
        """Ctrl+C, as in Claude Code: cancel the running turn; with none, clear the prompt;
        with nothing to clear, a second Ctrl+C in a row quits (asking when anything runs)."""
        session = self.current
        composer = self.query_one(Composer)
        now = time.monotonic()
        if session is not None and self.engine.status(session) in TURN_RUNNING:
            self._interrupted = 0.0
            await self.engine.cancel(session)
        elif composer.text:
            self._interrupted = 0.0
            composer.clear()
            composer.focus()
        elif now - self._interrupted <= INTERRUPT_AGAIN:
            self._interrupted = 0.0
            await self.action_quit()
        else:
            self._interrupted = now
            self.notify("Press Ctrl+C again to quit", timeout=INTERRUPT_AGAIN)

    def action_copy_last(self) -> None:
        """Copy the focused bubble, or else the newest reply (OSC 52: works over SSH)."""
        focused = self.focused
        if isinstance(focused, BubbleWidget):
            focused.action_copy()
            return
        replies = [w for w in self.query(AgentBubble)]
        if replies:
            replies[-1].action_copy()
