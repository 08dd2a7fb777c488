"""The Cockpit TUI: the session rail, the transcript and the composer, over the engine.

The app holds no ACP or SQL code: it calls the engine's interface and folds the engine's
events (posted to the app as messages, in order) into its widgets. `CockpitApp` is put
together from one class per job, each in its own module over `cockpit.ui.base` (the state
they share):

- `cockpit.ui.terminal_alerts`: the bell, desktop notifications, the window title;
- `cockpit.ui.overview`: what the rail, the status line and the open inbox show;
- `cockpit.ui.drafts`: each session's unsent draft, and the session to reopen on;
- `cockpit.ui.requests_on_screen`: the permission request shown in the transcript;
- `cockpit.ui.switching`: choosing the session on screen, starting a new one;
- `cockpit.ui.engine_events`: one handler per engine event (`cockpit.ui.engine_messages`);
- `cockpit.ui.session_actions`: rename, close, delete, cancel, copy, quit;
- `cockpit.ui.modes_and_options`: the agent's modes and options, and its plan;
- `cockpit.ui.screen_layout`: width, the rail's visibility, the focus chain, help.

What stays here is the app's own: its keys, its widgets, starting and stopping, and the
composer's completions and Cockpit's slash commands (`cockpit.ui.slash`).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Mapping
from typing import ClassVar

from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from cockpit.paths import bundled_dir
from cockpit.text.mentions import format_mention
from cockpit.ui.commands import ActionCommands, AgentCommands, SessionCommands
from cockpit.ui.completion import CompletionToken
from cockpit.ui.composer import Candidate, CompletionMenu, Composer
from cockpit.ui.engine_events import EngineEvents
from cockpit.ui.failures import reported
from cockpit.ui.footer import KeyFooter
from cockpit.ui.modes_and_options import ModesAndOptions
from cockpit.ui.one_line import clean_line
from cockpit.ui.rail import SessionRail
from cockpit.ui.screen_layout import ScreenLayout
from cockpit.ui.session_actions import SessionActions
from cockpit.ui.slash import COCKPIT_COMMANDS, COCKPIT_NAMED, SlashCommand, matching, parse_slash
from cockpit.ui.status_line import StatusLine
from cockpit.ui.transcript import TranscriptView


def freeze_startup_objects() -> None:
    """Put everything alive after the imports (modules, classes, Textual's and Rich's
    tables: about 100,000 objects that live as long as the process) out of the garbage
    collector's reach. A long stream otherwise sets off full collections that walk all of
    them, tens of milliseconds each, while a key waits. Once per process, before the app
    runs: the command line and the benchmark call it, tests do not."""
    gc.collect()
    gc.freeze()


class CockpitApp(SessionActions, ModesAndOptions, EngineEvents, ScreenLayout):
    """Many agent sessions, one screen."""

    CSS_PATH = str(bundled_dir("themes") / "cockpit.tcss")
    TITLE = "Cockpit"
    COMMANDS: ClassVar = App.COMMANDS | {SessionCommands, AgentCommands, ActionCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: handled as it arrives, before the keys after it are routed. A key that
        # opens a dialog or shows another session changes where the next keys go: typed in
        # the same burst, they reach the dialog, or the session switched to, never the
        # draft left (Enter right after Ctrl+N creates the session, never sends a draft).
        # Under a dialog they do nothing (`main_screen_key`), as Textual's other keys.
        Binding("ctrl+n", "new_session", "New", priority=True),
        Binding("f2", "main_screen_key('rename_session')", "Rename", priority=True),
        Binding("f4", "close_session", "Close"),
        Binding("f8", "main_screen_key('delete_session')", "Delete", show=False, priority=True),
        Binding(
            "ctrl+up", "main_screen_key('previous_session')", "Prev", show=False, priority=True
        ),
        Binding("ctrl+down", "main_screen_key('next_session')", "Next", show=False, priority=True),
        Binding("ctrl+b", "toggle_rail", "Rail"),
        Binding("ctrl+end", "jump_end", "Newest", show=False),
        Binding("f3", "copy_last", "Copy", show=False),
        Binding("ctrl+o", "main_screen_key('inbox')", "Inbox", priority=True),
        Binding("ctrl+t", "main_screen_key('options')", "Options", show=False, priority=True),
        Binding(
            "ctrl+g",
            "main_screen_key('next_needing')",
            "Next needing you",
            show=False,
            priority=True,
        ),
        Binding("f1", "main_screen_key('help')", "Help", priority=True),
        Binding("escape", "escape", "Cancel turn", show=False),
        Binding("ctrl+c", "interrupt", "Cancel turn", show=False),
    ]

    async def action_main_screen_key(self, action: str) -> None:
        """Run `action`, a key of the main screen bound with priority; under a dialog, the
        key goes on to the dialog instead."""
        if self.screen.is_modal:
            raise SkipAction()
        await self.run_action(action)

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield SessionRail(id="rail")
            with Vertical(id="main"):
                yield StatusLine(id="status")
                yield CompletionMenu(id="completion")
                yield Static("▼ new output below — Ctrl+End to jump", id="new-output")
                yield Composer(id="composer", blink=self.blink)
        yield KeyFooter()

    async def on_mount(self) -> None:
        if self._engine is None:
            assert self._engine_factory is not None
            self._engine = await self._engine_factory()
        for problem in [*self._problems, *self.engine.problems]:
            self.notify(problem, severity="warning", timeout=10, markup=False)
        transcript = TranscriptView(self.engine, id="transcript")
        await self.query_one("#main", Vertical).mount(transcript, before=0)
        self.engine.subscribe(self.engine_listener)
        self.query_one("#new-output").display = False
        composer = self.query_one(Composer)
        composer.menu = self.query_one(CompletionMenu)
        composer.menu.display = False
        composer.completer = self._complete
        self._apply_width(self.size.width)
        await self._reload_records()
        self._drafts = {r.id: r.draft for r in self.records.values() if r.draft}
        last = self.records.get(self._settings.last_session or "")
        reopen = last or (self._ordered()[0] if self.records else None)
        if reopen is None or (self.agent and reopen.agent != self.agent):
            # `cockpit --agent NAME` is never ignored: with sessions stored, a new session
            # with that agent, unless the one that reopens already runs it.
            await self._create_session(self._opened_with(), str(self.folder))
        if self.current is None and reopen is not None:
            self.select_session(reopen.id)
        self.set_interval(30, self._refresh_rail)
        self._focus_session()
        if not self._show_posted:  # else the keys wait until the session is shown
            self.release_keys()

    async def on_unmount(self) -> None:
        if self._stale_reader is not None:
            self._stale_reader.cancel()
        if self._engine is not None:
            self._save_drafts()
            self._save_last_session()
        if self._engine_factory is not None and self._engine is not None:
            try:
                await self._engine.close()
            except Exception:  # what could be saved is saved; the terminal must come back
                logging.getLogger(__name__).exception("closing the engine failed")

    # -- the composer -------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        if self.engine.service_stopped is not None:  # Enter starts it again, then sends
            self.run_worker(self._start_service_again(message), exit_on_error=False)
            return
        self._submit(message)

    def on_composer_blank_submitted(self, message: Composer.BlankSubmitted) -> None:
        if self.engine.service_stopped is not None:
            self.run_worker(self._start_service_again(None), exit_on_error=False)

    async def _start_service_again(self, message: Composer.Submitted | None) -> None:
        """Start the service the user stopped, then send what they typed, if anything (put
        back in the prompt when the service cannot be started)."""
        try:
            await self.engine.reattach()
        except Exception as error:
            if message is not None:
                composer = self.query_one(Composer)
                if composer.session == message.session and not composer.text:
                    composer.text = message.text
            self.report_failure("start the Cockpit service again", error)
            return
        if message is not None:
            self._submit(message)

    def _submit(self, message: Composer.Submitted) -> None:
        session = message.session
        if session not in self.records:  # deleted since
            return
        command = parse_slash(message.text)
        if command is not None and command[0] in COCKPIT_NAMED:
            work = self._run_slash(session, *command)
            self.run_worker(work, group="slash", exit_on_error=False)
            return
        # The turn runs in the engine: a prompt typed while the agent starts waits for it,
        # and a failure is a row in the session, never a lost prompt.
        self.engine.send(session, message.text)

    @reported("run that command")
    async def _run_slash(self, session: str, name: str, arguments: str) -> None:
        """Run one of Cockpit's own commands (its row of `COCKPIT_COMMANDS` says how)."""
        command = COCKPIT_NAMED.get(name)
        if command is None or command.run is None:
            return
        await command.run(self, session, arguments)

    @reported("complete that", default=[])
    async def _complete(self, session: str, token: CompletionToken) -> list[Candidate]:
        """What the composer offers for `/command` or `@path` in `session`'s draft."""
        record = self.records.get(session)
        if record is None:
            return []
        if token.trigger == "/":
            agent = [
                SlashCommand(
                    clean_line(str(c.get("name"))),
                    clean_line(str(c.get("description") or "")),
                    clean_line(str((c.get("input") or {}).get("hint") or "")),
                    cockpit=False,
                )
                for c in record.commands or ()
                if isinstance(c, Mapping) and c.get("name")
            ]
            found = matching([*agent, *COCKPIT_COMMANDS], token.query)
            return [
                Candidate(
                    f"/{c.name} " if c.hint else f"/{c.name}",
                    f"/{c.name}",
                    ("cockpit: " if c.cockpit else "")
                    + c.description
                    + (f"  [{c.hint}]" if c.hint else ""),
                )
                for c in found
            ]
        matches = await self.engine.find_files(record.id, token.query, 8)
        return [Candidate(format_mention(m.path) + " ", m.path, "", m.positions) for m in matches]
