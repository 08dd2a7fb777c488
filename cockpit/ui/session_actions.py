"""What the user does to sessions with keys and the palette: start, rename, close and
delete one; kill the user's own command or cancel a turn (Esc, Ctrl+C), copy a reply, and
quit, asking first when something would be lost."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App

from cockpit.api import DEFAULT_AGENT, AgentSpec, EngineAPI, Status, WorktreeRequest, read_worktree
from cockpit.text.textout import session_title
from cockpit.ui.bubbles import AgentBubble, BubbleWidget
from cockpit.ui.composer import Composer
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.drafts import Drafts
from cockpit.ui.failures import reported, reported_to
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.live_settings import LiveSettings
from cockpit.ui.one_line import clean_line
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.screens.new_session import NewSessionChoice, NewSessionScreen
from cockpit.ui.screens.questions import ConfirmScreen, RenameScreen
from cockpit.ui.session_states import quit_question
from cockpit.ui.sessions import Sessions
from cockpit.ui.shell_rules import escape_does, interrupt_does
from cockpit.ui.shell_runs import ShellRuns
from cockpit.ui.switching import Switching
from store import SessionBusy

INTERRUPT_AGAIN = 2.0
"""Seconds within which a second Ctrl+C (with nothing to cancel or clear) quits."""

TURN_RUNNING = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING})


class SessionActions:
    """The session actions the keys, the command palette and slash commands run."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        switching: Switching,
        drafts: Drafts,
        requests: RequestsOnScreen,
        open_screen: OpenScreen,
        folder: Path,
        agent: str | None,
        opened_with: str | AgentSpec,
        shell: ShellRuns,
        keys: HeldKeys,
        settings: LiveSettings,
    ) -> None:
        self.app = app
        """For quitting, notices, the composer and workers."""
        self._engine = engine
        self._sessions = sessions
        self._switching = switching
        self._drafts = drafts
        self._requests = requests
        self._open_screen = open_screen
        self._folder = folder
        self._agent = agent
        """The agent Cockpit was opened with, by name."""
        self.opened_with = opened_with
        """The agent a new session gets when none is chosen."""
        self._shell = shell
        self._keys = keys
        self._settings = settings
        self._interrupted = 0.0
        """When Ctrl+C last found nothing to cancel or clear (a second one offers to quit)."""

    async def quit(self) -> None:
        """Ctrl+Q: attached to the service, detach at once (the agents go on, turns
        complete, questions wait for the next attach). With the engine in this process
        (`--local`), quit, after asking when a turn runs or a question waits: every agent
        stops with it."""
        engine = self._engine()
        question = None
        if not engine.detaches:
            question = quit_question(
                self._running_turns(), engine.pending_count(), engine.saving_problem
            )
        if question is None:
            self._exit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._exit()

        self._open_screen(ConfirmScreen(question, yes="Quit", no="Stay"), answered)

    def _exit(self) -> None:
        """End the app once the draft is kept as the keys before the quit left it."""
        self._drafts.close(self.app.exit)

    def _running_turns(self) -> int:
        busy = (Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING)
        return sum(self._engine().status(session) in busy for session in self._sessions.records)

    def new_session(
        self,
        agent: str | None = None,
        folder: str | None = None,
        worktree: WorktreeRequest | None = None,
    ) -> None:
        """Pick an agent and a folder for a new session; the agent of the session on screen
        is highlighted (else the one Cockpit was opened with), so Ctrl+N Enter starts
        another session like it. A folder or worktree the engine refuses (no folder where
        the agents run, a branch checked out elsewhere) opens the dialog again on what was
        chosen, at the folder, its worktree choices as they were: nothing typed is lost,
        and neither is what was typed right after its Enter: it waits for the new session
        (or for the dialog, opened again)."""
        record = self._sessions.records.get(self._sessions.current or "")
        default = record.agent if record is not None else self._agent or DEFAULT_AGENT
        engine = self._engine()

        async def chosen(choice: NewSessionChoice | None) -> None:
            if choice is None:
                return
            try:
                if choice.repository is not None:
                    self._settings.remember_worktree(choice.repository, choice.worktree is not None)
                setup = await self._setup_to_approve(choice)
                if setup is not None:
                    self._ask_setup(choice, *setup)
                else:
                    await self._create(choice)
            finally:
                if not self._switching.showing:  # else the keys wait until it is shown
                    self._keys.release_keys()

        def installed(name: str) -> bool:
            return any(info.spec.name == name and info.installed for info in engine.agents())

        screen = NewSessionScreen(
            engine.agents(),
            folder or str(self._folder),
            agent or default,
            installed,
            engine.folders,
            at_folder=folder is not None,
            on_choice=self._keys.hold_keys,
            repository=engine.repository,
            worktree_default=self._settings.worktree_default,
            worktree=worktree,
        )
        self._open_screen(screen, chosen)

    async def _create(self, choice: NewSessionChoice) -> None:
        """Make the session chosen; a folder refused opens the dialog again on it."""
        if not await self._switching.create(choice.agent, choice.folder, choice.worktree):
            self.new_session(choice.agent, choice.folder, choice.worktree)

    async def _setup_to_approve(self, choice: NewSessionChoice) -> tuple[str, str] | None:
        """(repository, command) when the worktree chosen has a setup command in its
        repository's `.cockpit.toml` the user has not approved; else None (no worktree,
        no setup, approved, or no answer: the engine then says why)."""
        if choice.worktree is None:
            return None
        try:
            info = await self._engine().project(choice.folder, choice.worktree.base)
        except (ValueError, OSError):
            return None
        if info.setup is None or info.setup_approved:
            return None
        return info.top, info.setup

    def _ask_setup(self, choice: NewSessionChoice, repository: str, command: str) -> None:
        """Ask before a repository's setup command first runs: it is someone else's code.
        Either way the session is made; Enter keeps the command from running."""

        async def answered(approve: bool) -> None:
            if approve:
                await self._engine().approve_command(repository, "setup", command)
            await self._create(choice)

        question = ConfirmScreen(
            f"{repository} asks, in its .cockpit.toml, to run this setup command in each"
            " new worktree. Run it?",
            yes="Approve and run",
            no="Not now",
            details=(
                f"$ {command}",
                "Approved, it runs in this repository's new worktrees until its text changes.",
            ),
        )
        self._open_screen(question, answered)

    async def new_session_with(self, agent: str) -> None:
        """Start a session with `agent` in the start folder."""
        await self._switching.create(agent, str(self._folder))

    def rename(self, session: str | None = None) -> None:
        """Give `session` (else the session on screen) a title."""
        record = self._sessions.records.get(session or self._sessions.current or "")
        if record is None:
            return

        async def renamed(title: str | None) -> None:
            if title:
                await self._engine().rename(record.id, title)

        self._open_screen(RenameScreen(clean_line(session_title(record))), renamed)

    def close(self, session: str) -> None:
        """Stop the agent of `session`; its transcript stays. The stop runs beside the
        screen, which takes keys meanwhile: it may last seconds (a turn cancelled, an agent
        given its grace to exit)."""
        work: Callable[[], object] = partial(self._close, session)
        self.app.run_worker(work, group="stop", exit_on_error=False)

    @reported("close the session")
    async def _close(self, session: str) -> None:
        await self._engine().stop(session)
        self.app.notify("Session closed: its agent stopped. A prompt starts it again.", timeout=4)

    def delete(self) -> None:
        """Delete the session on screen, after asking."""
        sessions = self._sessions
        record = sessions.records.get(sessions.current or "")
        if record is None:
            return

        @reported_to(self.app, "delete the session")
        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                await self._engine().delete(record.id)
            except (SessionBusy, ValueError) as error:  # another Cockpit writes it; unmerged work
                self.app.notify(clean_line(str(error)), severity="error", markup=False)
                return
            sessions.records.pop(record.id, None)
            self._drafts.forget(record.id)
            sessions.current = None
            if sessions.records:
                self._switching.select(sessions.ordered()[0].id)
            else:
                await self._switching.create(self.opened_with, str(self._folder))

        question = f"Delete “{clean_line(session_title(record))}” and its transcript?"
        if read_worktree(record.info) is not None:
            question += " Its worktree and the branch Cockpit made for it go too."
        self._open_screen(ConfirmScreen(question), confirmed)

    @reported("cancel the turn")
    async def escape(self) -> None:
        """Esc wherever the keyboard is (the transcript, a bubble, the rail): kill the
        session's commands (`!command`) while one runs; else cancel the running turn;
        with none running, back to the composer (or the pending request). Dialogs, popups
        and the composer's menu take their Esc before this one."""
        session = self._sessions.current
        does = escape_does(self._shell.busy(session), self._turn_running(session))
        if does == "stop" and session is not None:
            if await self._shell.stop(session):
                return
            does = escape_does(False, self._turn_running(session))
        if does == "cancel":
            await self.cancel_turn()
        else:
            self._requests.focus_session()

    @reported("cancel the turn")
    async def escape_in_prompt(self, session: str) -> None:
        """Esc in the prompt of `session` (the session whose draft it held as the key was
        typed): kill its commands while one runs, else cancel its turn."""
        if self._shell.busy(session) and await self._shell.stop(session):
            return
        await self._engine().cancel(session)

    @reported("cancel the turn")
    async def cancel_turn(self, session: str | None = None) -> None:
        """Cancel the running turn of `session`, else of the session on screen (the status
        line says so until the agent has ended it)."""
        session = session or self._sessions.current
        if session is not None:
            await self._engine().cancel(session)

    @reported("cancel the turn")
    async def interrupt(self, session: str | None = None) -> None:
        """Ctrl+C, as in Claude Code: kill the commands of `session` (else of the session
        on screen) while one runs; else cancel the running turn; with none, clear the
        prompt; with nothing to clear, a second Ctrl+C in a row quits (asking when
        anything runs)."""
        session = session or self._sessions.current
        composer = self.app.query_one(Composer)
        now = time.monotonic()
        again = now - self._interrupted <= INTERRUPT_AGAIN
        does = interrupt_does(
            self._shell.busy(session), self._turn_running(session), bool(composer.text), again
        )
        if does == "stop" and session is not None:
            self._interrupted = 0.0
            if await self._shell.stop(session):
                return
            does = interrupt_does(False, self._turn_running(session), bool(composer.text), again)
        if does == "cancel" and session is not None:
            self._interrupted = 0.0
            await self._engine().cancel(session)
        elif does == "clear":
            self._interrupted = 0.0
            composer.clear()
            composer.focus()
        elif does == "quit":
            self._interrupted = 0.0
            await self.quit()
        else:
            self._interrupted = now
            self.app.notify("Press Ctrl+C again to quit", timeout=INTERRUPT_AGAIN)

    def _turn_running(self, session: str | None) -> bool:
        return session is not None and self._engine().status(session) in TURN_RUNNING

    def copy_last(self) -> None:
        """Copy the focused bubble, or else the newest reply (OSC 52: works over SSH)."""
        focused = self.app.focused
        if isinstance(focused, BubbleWidget):
            focused.action_copy()
            return
        replies = [w for w in self.app.query(AgentBubble)]
        if replies:
            replies[-1].action_copy()
