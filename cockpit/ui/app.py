"""The Cockpit TUI: the session rail, the transcript and the composer, over the engine.

The app holds no ACP or SQL code: it calls the engine's interface and folds the engine's
events (posted to the app as messages, in order) into its widgets. Its state lives in the
parts that own it, each in its own module, each given what it needs:

- `cockpit.ui.sessions`: the session records and the session chosen;
- `cockpit.ui.live_settings`: the settings, read again when used, and saved;
- `cockpit.ui.held_keys`: the keys typed before the keyboard has landed;
- `cockpit.ui.drafts`: each session's unsent draft;
- `cockpit.ui.terminal_alerts`: the bell, desktop notifications, the window title;
- `cockpit.ui.overview`: what the rail, the status line and the open inbox show;
- `cockpit.ui.requests_on_screen`: the permission request shown in the transcript;
- `cockpit.ui.switching`: choosing the session on screen, starting a new one;
- `cockpit.ui.engine_follower`: what each engine event (`cockpit.ui.engine_messages`) changes;
- `cockpit.ui.session_actions`: rename, close, delete, cancel, copy, quit;
- `cockpit.ui.shell_runs`: the user's own commands (`!command`) and the chips they leave;
- `cockpit.ui.modes_and_options`: the agent's modes and options, and its plan;
- `cockpit.ui.screen_layout`: width, the rail's visibility, the focus chain, help.

What stays here is the app's own: its keys (`BINDINGS`), its widgets, starting and stopping,
the wiring of Textual's messages and actions to the parts, dialogs and failures, themes,
and the composer's completions and Cockpit's slash commands (`cockpit.ui.slash`).
"""

from __future__ import annotations

import functools
import gc
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import events, on
from textual.actions import SkipAction
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.theme import ThemeProvider
from textual.widgets import OptionList, Static, TextArea

from cockpit.api import (
    DEFAULT_AGENT,
    AgentCommand,
    AgentSpec,
    EngineAPI,
    WorktreeRequest,
    read_command,
    read_worktree,
)
from cockpit.compat.textual_private import (
    keep_timer_delays_positive,
    spell_out_alt_keys,
    widget_is_mounted,
)
from cockpit.paths import bundled_dir, config_dir, settings_path
from cockpit.text.mentions import format_mention
from cockpit.text.review import ReviewComment
from cockpit.text.textout import describe_error, session_title
from cockpit.ui.commands import CockpitCommands
from cockpit.ui.completion import CompletionToken
from cockpit.ui.composer import Candidate, CompletionMenu, Composer
from cockpit.ui.dialog import Palette
from cockpit.ui.drafts import Drafts
from cockpit.ui.engine_follower import EngineFollower
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
from cockpit.ui.footer import KeyFooter
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.keys_in_order import HandedOn
from cockpit.ui.live_settings import LiveSettings
from cockpit.ui.modes_and_options import ModesAndOptions
from cockpit.ui.one_line import clean_line, short_folder
from cockpit.ui.overview import Overview
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.races import Races
from cockpit.ui.rail import SessionRail
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.screen_layout import ScreenLayout
from cockpit.ui.screen_rules import same_dialog
from cockpit.ui.screens.changes import SHELL, ChangesScreen
from cockpit.ui.screens.inbox import InboxItem
from cockpit.ui.screens.new_session import NewSessionScreen
from cockpit.ui.session_actions import SessionActions
from cockpit.ui.sessions import Sessions
from cockpit.ui.shell_chips import ChipShelf, ShellChips
from cockpit.ui.shell_rules import shell_command, shell_hint, unbang
from cockpit.ui.shell_runs import ShellRuns
from cockpit.ui.slash import COCKPIT_NAMED, SlashCommand, completions, for_agent, parse_slash
from cockpit.ui.status_line import StatusLine
from cockpit.ui.switching import Switching, SwitchingParts
from cockpit.ui.terminal_alerts import TerminalAlerts
from cockpit.ui.theme_borders import visible_borders
from cockpit.ui.themes import (
    ANSI_ON_DARK,
    ANSI_ON_LIGHT,
    CONTENT_STYLES,
    DEFAULT_THEME,
    load_themes,
    startup_theme,
)
from cockpit.ui.transcript import TranscriptView
from cockpit.ui.welcome import Welcome
from cockpit.ui.worktree_actions import WorktreeActions
from cockpit.ui.worktree_statuses import REFRESH_SECONDS as WORKTREE_REFRESH
from cockpit.ui.worktree_statuses import WorktreeStatuses
from store import SessionRecord

EngineFactory = Callable[[], Awaitable[EngineAPI]]


def freeze_startup_objects() -> None:
    """Put everything alive after the imports (modules, classes, Textual's and Rich's
    tables: about 100,000 objects that live as long as the process) out of the garbage
    collector's reach. A long stream otherwise sets off full collections that walk all of
    them, tens of milliseconds each, while a key waits. Once per process, before the app
    runs: the command line and the benchmark call it, tests do not."""
    gc.collect()
    gc.freeze()


@functools.cache
def default_variables() -> dict[str, str]:
    """The app variables of the default theme."""
    themes, _ = load_themes(bundled_dir("themes"), None)
    return next(dict(theme.variables) for theme in themes if theme.name == DEFAULT_THEME)


class CockpitApp(App[None]):
    """Many agent sessions, one screen."""

    CSS_PATH = str(bundled_dir("themes") / "cockpit.tcss")
    TITLE = "Cockpit"
    COMMANDS: ClassVar = {CockpitCommands}
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
        Binding("f6", "main_screen_key('changes')", "Changes", show=False, priority=True),
        Binding("f1", "main_screen_key('help')", "Help", priority=True),
        Binding("p", "rail_plan", "Plan", priority=True),
        Binding("escape", "escape", "Cancel turn", show=False),
        Binding("ctrl+c", "interrupt", "Cancel turn", show=False),
    ]

    def __init__(
        self,
        engine: EngineAPI | EngineFactory,
        *,
        folder: Path,
        agent: str | AgentSpec | None = None,
        clock: Callable[[], float] = time.time,
        blink: bool = True,
        settings_file: Path | None = None,
        themes_dir: Path | None = None,
        worktree: bool = False,
        agents_elsewhere: bool = False,
    ) -> None:
        keep_timer_delays_positive()  # before any timer: a negative one froze the screen
        spell_out_alt_keys()  # before the driver starts: Alt+W then Down in one read
        super().__init__()
        self._engine: EngineAPI | None = None if callable(engine) else engine
        self._engine_factory: EngineFactory | None = engine if callable(engine) else None
        self.folder = folder
        self.agent = agent.name if isinstance(agent, AgentSpec) else agent
        """The agent Cockpit was opened with (`--agent`), by name."""
        self.worktree = worktree
        """Opened with `--worktree`: a new session in a worktree of its own, from HEAD."""
        self.agents_elsewhere = agents_elsewhere
        """The agents run on another machine (`--remote`, `--via`): an agent's own login
        cannot run in this terminal."""
        self.clock = clock
        self.blink = blink
        self.settings_file = settings_file or settings_path()
        self.themes_dir = themes_dir if themes_dir is not None else config_dir() / "themes"
        # The parts, each owning its state, each given what it reads and what it calls.
        engine_of = self._engine_now
        self.settings = LiveSettings(self, self.settings_file)
        self.sessions = Sessions(engine_of, self._session_read, self._report)
        self.keys = HeldKeys(super().on_event, self.post_message, self.call_later)
        self.drafts = Drafts(self, engine_of, lambda: self.sessions.records)
        self.alerts = TerminalAlerts(self, self.sessions, lambda: self.settings.read().notify)
        self.worktrees = WorktreeStatuses(
            self, engine_of, self.sessions, lambda: self.overview.refresh_rail()
        )
        self.overview = Overview(
            self,
            engine_of,
            self.sessions,
            self.alerts,
            self._now,
            self.worktrees,
            lambda session: self.shell.busy(session),
            lambda session: self.shell.reads_input(session),
        )
        self.requests = RequestsOnScreen(self, engine_of, self.keys)
        self.reviews: dict[str, list[ReviewComment]] = {}
        """Review comments not sent yet, per session: closing the changes screen keeps them."""
        parts = SwitchingParts(
            self.drafts,
            self.keys,
            self.overview,
            self.requests,
            self.settings,
            self.open_screen,
            self._now,
        )
        self.switching = Switching(self, engine_of, self.sessions, parts)
        self.shell = ShellRuns(self, engine_of, ChipShelf(self._chips_changed))
        # How it runs when given as a command (`--agent-cmd`), which the engine's own
        # registry does not know (the service's, in another process).
        spec = agent if isinstance(agent, AgentSpec) else None
        self.actions = SessionActions(
            self,
            engine_of,
            self.sessions,
            self.switching,
            self.drafts,
            self.requests,
            self.open_screen,
            folder,
            self.agent,
            spec or self.agent or DEFAULT_AGENT,
            self.shell,
            self.keys,
            self.settings,
        )
        self.modes = ModesAndOptions(self, engine_of, self.sessions, self.open_screen, self.keys)
        self.worktree_actions = WorktreeActions(self, engine_of, self.sessions, self.open_screen)
        self.races = Races(self, engine_of, self.sessions, self.open_screen, self.select_session)
        self.layout = ScreenLayout(self, self.open_screen)
        self.follower = EngineFollower(
            self,
            engine_of,
            self.sessions,
            self.overview,
            self.alerts,
            self.requests,
            self.settings,
            self.shell,
        )
        self._load_themes()

    # -- what the parts share -----------------------------------------------------------------

    @property
    def engine(self) -> EngineAPI:
        assert self._engine is not None, "the engine is not open yet"
        return self._engine

    def _engine_now(self) -> EngineAPI:
        return self.engine

    @property
    def records(self) -> dict[str, SessionRecord]:
        """Every session's record, by id (`Sessions` keeps them)."""
        return self.sessions.records

    @property
    def current(self) -> str | None:
        """The session chosen (`Sessions` keeps it)."""
        return self.sessions.current

    @property
    def engine_listener(self) -> Callable[[Any], None]:
        """What the app subscribes to the engine."""
        return self.follower.listener

    @property
    def sent_sequences(self) -> list[str]:
        """Escape sequences sent to the terminal (titles, notifications), newest last."""
        return self.alerts.sent_sequences

    def _session_read(self, session: str) -> None:
        """A session's record was read in the background: the rail shows it."""
        self.overview.refresh_session(session)

    def get_css_variables(self) -> dict[str, str]:
        """The theme's variables, with every border Cockpit draws made to stand out from
        what it sits on (`visible_borders`: a theme of Textual's may draw it in a shade of
        its background)."""
        variables = super().get_css_variables()
        palette = ANSI_ON_DARK if self.current_theme.dark else ANSI_ON_LIGHT
        variables.update(visible_borders(variables, palette))  # theme_variables is this dict
        return variables

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Cockpit's own variables, from the default theme, for any theme that lacks them
        (Textual asks before `__init__` has run, so this reads the bundled file)."""
        return default_variables()

    def open_screen(self, screen: Screen[Any], callback: Any = None) -> Awaitable[Any] | None:
        """Open a dialog unless the same one is open already: a key pressed twice in one
        burst (Ctrl+O Ctrl+O, a held F1) opens it once. What its callback raises (the
        engine failing to do what the dialog asked) is reported; the app goes on. Returns
        what waits until the dialog is mounted (None when it was open already). The keys
        typed meanwhile (F6 then t, in one burst) are held until it is, and go to it."""
        if any(same_dialog(screen, opened) for opened in self.screen_stack):
            return None
        opened = self.push_screen(screen, None if callback is None else self._reporting(callback))
        if not self.keys.holding:  # a hold begun before (the start's) is its owner's to end
            self.keys.hold_keys()
            self.run_worker(self._landed(opened), group="dialogs", exit_on_error=False)
        return opened

    async def _landed(self, opened: Awaitable[Any]) -> None:
        """Release the keys held while a dialog opened, once it is mounted."""
        try:
            await opened
        finally:
            self.keys.release_keys()

    def _reporting(self, callback: Callable[[Any], Any]) -> Callable[[Any], Awaitable[None]]:
        async def answered(result: Any) -> None:
            try:
                outcome = callback(result)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as error:
                self.report_failure("do what the dialog asked", error)

        return answered

    def _now(self) -> float:
        """`clock`, looked up when called (a test may set another)."""
        return self.clock()

    def _report(self, what: str, error: Exception) -> None:
        """`report_failure`, looked up when called (a test may replace it)."""
        self.report_failure(what, error)

    def report_failure(self, what: str, error: Exception) -> None:
        """Something the screen asked of the engine or the store failed: the user reads why
        in the session on screen (or in a notice when even that cannot be written), it goes
        to the log with its traceback, and the app goes on."""
        logging.getLogger(__name__).error("could not %s", what, exc_info=error)
        message = f"Cockpit could not {what}: {describe_error(error)}"
        if self._engine is None or not self.is_running:
            return
        self.run_worker(self.engine.report(self.current, message), group="report")

    def action_command_palette(self) -> None:
        """Ctrl+P: the command palette, unless one is open under another dialog (Textual
        opened a second one there, and died of the duplicate id)."""
        if self.use_command_palette and not any(
            isinstance(screen, CommandPalette) for screen in self.screen_stack
        ):
            self.open_screen(Palette(id="--command-palette"))

    def search_themes(self) -> None:
        """The palette's "Change theme", in Cockpit's palette: Textual's own, an Enter held
        on a theme chose it twice and the second closed the screen under it (the app died,
        seen under the key monkey)."""
        self.open_screen(Palette(providers=[ThemeProvider], placeholder="Search for themes…"))

    # -- themes -------------------------------------------------------------------------------

    def _load_themes(self) -> None:
        """Register the bundled and user themes and choose the saved one; a broken theme or
        settings file is reported once the screen is up, and never stops the app."""
        themes, problems = load_themes(bundled_dir("themes"), self.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        self.settings.load(problems)
        self.ansi_theme_dark, self.ansi_theme_light = ANSI_ON_DARK, ANSI_ON_LIGHT
        self.console.push_theme(CONTENT_STYLES)
        saved, colours = self.settings.kept.theme, self.console.color_system
        self.theme = startup_theme(saved, colours, self.available_themes)

    def watch_theme(self, theme: str) -> None:
        # Textual runs this watcher while `_load_themes` sets the first theme, before the
        # app is mounted: that choice is not the user's, and there is no rail yet.
        if widget_is_mounted(self):
            self.settings.choose_theme(theme)
            self.overview.restyle_rail()

    async def action_main_screen_key(self, action: str) -> None:
        """Run `action`, a key of the main screen bound with priority; under a dialog, the
        key goes on to the dialog instead."""
        if self.screen.is_modal:
            raise SkipAction()
        await self.run_action(action)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`p` is the rail's key: shown and taken only while the rail has the keyboard
        (anywhere else it goes its usual way: a letter typed)."""
        if action == "rail_plan":
            rail = self.query_one_optional(SessionRail)
            return not self.screen.is_modal and rail is not None and self.focused is rail
        return True

    def action_rail_plan(self) -> None:
        """`p` on the rail, taken as it comes (a priority key): the keys typed after it
        (`e` to edit) wait for the plan's screen."""
        session = self.query_one(SessionRail).highlighted_session()
        if session is not None:
            self.keys.hold_keys()  # released once the plan's screen is mounted
            self.run_worker(self.modes.show_plan(session), group="plan", exit_on_error=False)

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield SessionRail(id="rail")
            with Vertical(id="main"):
                yield Welcome(id="welcome")  # where the transcript will be, above it
                yield StatusLine(id="status")
                yield CompletionMenu(id="completion")
                yield Static("▼ new output below — Ctrl+End to jump", id="new-output")
                yield ShellChips(id="chips")
                yield Composer(id="composer", blink=self.blink)
        yield KeyFooter()

    async def on_mount(self) -> None:
        if self._engine is None:
            assert self._engine_factory is not None
            self._engine = await self._engine_factory()
        for problem in [*self.settings.problems, *self.engine.problems]:
            self.notify(problem, severity="warning", timeout=10, markup=False)
        transcript = TranscriptView(self.engine, id="transcript")
        await self.query_one("#main", Vertical).mount(transcript, before="#status")
        self.engine.subscribe(self.follower.listener)
        self.query_one("#new-output").display = False
        self.query_one(Welcome).display = False
        composer = self.query_one(Composer)
        composer.menu = self.query_one(CompletionMenu)
        composer.menu.display = False
        composer.completer = self._complete
        composer.chips = self.shell.shelf
        composer.reads_input = self.shell.reads_input
        self.layout.apply_width(self.size.width)
        await self.sessions.reload()
        self.drafts.load(self.records)
        last = self.records.get(self.settings.kept.last_session or "")
        reopen = last or (self.sessions.ordered()[0] if self.records else None)
        if self.worktree:  # `cockpit --worktree`: always a new session, in its own worktree
            await self.switching.create(
                self.actions.opened_with, str(self.folder), WorktreeRequest()
            )
        elif reopen is None or (self.agent and reopen.agent != self.agent):
            # `cockpit --agent NAME` is never ignored: with sessions stored, a new session
            # with that agent, unless the one that reopens already runs it.
            await self.switching.create(self.actions.opened_with, str(self.folder))
        if self.current is None and reopen is not None:
            self.select_session(reopen.id)
        self.set_interval(30, self.overview.refresh_rail)
        self.worktrees.refresh()
        self.set_interval(WORKTREE_REFRESH, self.worktrees.tick)
        self.requests.focus_session()
        if not self.switching.showing:  # else the keys wait until the session is shown
            self.keys.release_keys()

    async def on_unmount(self) -> None:
        self.sessions.close()
        if self._engine is not None:
            self.drafts.save()
            self.settings.save_last_session()
        if self._engine_factory is not None and self._engine is not None:
            try:
                await self._engine.close()
            except Exception:  # what could be saved is saved; the terminal must come back
                logging.getLogger(__name__).exception("closing the engine failed")

    async def on_event(self, event: events.Event) -> None:
        if not self.keys.held(event):  # typed before the keyboard landed: handled later
            await super().on_event(event)

    # -- sessions: the public means (the palette, slash commands) ------------------------------

    def select_session(self, session: str, focus: bool = True) -> None:
        """Show `session` (`Switching.select`)."""
        self.switching.select(session, focus)

    def session_choices(self) -> list[tuple[str, str, str]]:
        """(id, title, details) of every session, for the command palette."""
        return self.sessions.choices()

    async def new_session_with(self, agent: str) -> None:
        """Start a session with `agent` in the start folder (command palette, `/new`)."""
        await self.actions.new_session_with(agent)

    def inbox_items(self) -> list[InboxItem]:
        """Every pending request and every finished-unread session, oldest first."""
        return self.overview.inbox_items()

    async def set_mode_named(self, session: str, name: str) -> None:
        """`/mode NAME` in `session`."""
        await self.modes.set_mode_named(session, name)

    def close_session(self, session: str) -> None:
        """Stop the agent of `session`; its transcript stays."""
        self.actions.close(session)

    async def choose_model(self, session: str, name: str) -> None:
        """`/model [NAME]` in `session`."""
        await self.modes.choose_model(session, name)

    # -- the keys' actions --------------------------------------------------------------------

    def action_new_session(self) -> None:
        """Pick an agent and a folder for a new session."""
        self.actions.new_session()

    def action_rename_session(self, session: str | None = None) -> None:
        """Give `session` (else the session on screen) a title."""
        self.actions.rename(session)

    def action_close_session(self) -> None:
        """Stop the agent of the session on screen; its transcript stays."""
        if self.current is not None:
            self.actions.close(self.current)

    def action_delete_session(self) -> None:
        """Delete the session on screen, after asking."""
        self.actions.delete()

    def action_previous_session(self) -> None:
        """Show the session above in the rail."""
        self.switching.step(-1)

    def action_next_session(self) -> None:
        """Show the session below in the rail."""
        self.switching.step(1)

    async def race(self, session: str, arguments: str) -> None:
        """`/race AGENTS PROMPT` starts a race and shows it; `/race` shows this one's."""
        await self.races.race(session, arguments)

    async def action_clean_worktrees(self) -> None:
        """The cleanup screen: every worktree, the chosen ones removed after a preview."""
        await self.worktree_actions.cleanup()

    def action_archive_worktree(self) -> None:
        """Archive the worktree session on screen, after asking."""
        self.worktree_actions.archive()

    async def action_restore_worktree(self) -> None:
        """Restore the archived (or missing) worktree of the session on screen."""
        await self.worktree_actions.restore()

    def action_inbox(self) -> None:
        """Show everything that waits on the user, across all sessions."""
        self.switching.inbox()

    def action_next_needing(self) -> None:
        """Ctrl+G: the question on screen, else the next session that needs the user."""
        self.switching.next_needing()

    def action_options(self, session: str | None = None) -> None:
        """Choose any mode or config option the agent offers."""
        self.modes.options(session)

    def action_checkpoints(self) -> None:
        """The checkpoints of the session on screen, to put its files back (`/checkpoints`)."""
        if self.current is not None:
            work = self.run_slash(self.current, "checkpoints", "")
            self.run_worker(work, group="slash", exit_on_error=False)

    def session_title(self, session: str) -> str:
        """A session's title as lists show it (its id while it has none)."""
        record = self.records.get(session)
        return session_title(record) if record is not None else session

    async def action_show_plan(self, session: str | None = None) -> None:
        """The latest plan of a session (the highlighted one in the rail, or this one)."""
        await self.modes.show_plan(session)

    async def action_quit(self) -> None:
        """Ctrl+Q: detach, or quit after asking (`SessionActions.quit`)."""
        await self.actions.quit()

    async def action_escape(self) -> None:
        """Esc: cancel the running turn, else back to the composer."""
        await self.actions.escape()

    async def action_cancel_turn(self, session: str | None = None) -> None:
        """Cancel the running turn of `session`, else of the session on screen."""
        await self.actions.cancel_turn(session)

    async def action_interrupt(self) -> None:
        """Ctrl+C: cancel the turn, clear the prompt, or (twice) quit."""
        await self.actions.interrupt()

    def action_copy_last(self) -> None:
        """Copy the focused bubble, or else the newest reply."""
        self.actions.copy_last()

    def action_toggle_rail(self) -> None:
        """Show or hide the session rail."""
        self.layout.toggle_rail()

    async def action_jump_end(self) -> None:
        """Scroll to the newest output."""
        await self.layout.jump_end()

    def action_focus_next(self) -> None:
        """Tab: the screen's focus chain with the prompt just before the transcript."""
        self.layout.focus_step(1)

    def action_focus_previous(self) -> None:
        """Shift+Tab: back along the same chain (the prompt itself uses it for modes)."""
        self.layout.focus_step(-1)

    def action_changes(self, session: str | None = None) -> None:
        """F6: the changes of this worktree session, to review, commit, merge, push or
        discard."""
        session = session or self.current
        record = self.records.get(session or "")
        worktree = read_worktree(record.info) if record is not None else None
        if session is None or worktree is None:
            self.notify(
                "This session works in no worktree of its own: start one with a worktree"
                " (cockpit --worktree) to review its changes here.",
                severity="warning",
                markup=False,
            )
            return
        composer = self.query_one(Composer)

        def answered(result: str | None) -> None:
            if result == SHELL and composer.session == session:  # a `!command` prompt
                composer.text = "!"
                composer.move_cursor(composer.document.end)
                composer.focus()

        comments = self.reviews.setdefault(session, [])
        self.open_screen(
            ChangesScreen(self.engine, session, worktree.branch, self.open_screen, comments),
            answered,
        )

    def action_help(self) -> None:
        """Show every key, Ctrl+Q as it acts (detach, unless the agents run in Cockpit)."""
        self.layout.help(self._engine is None or self._engine.detaches)

    # -- messages, each to the part it concerns -----------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.layout.apply_width(event.size.width)

    def on_transcript_view_unseen(self, message: TranscriptView.Unseen) -> None:
        self.layout.show_unseen(message.unseen)

    def on_transcript_view_blank(self, message: TranscriptView.Blank) -> None:
        record = self.records.get(message.session or "")
        self.layout.show_welcome(message.blank, record.agent if record else None)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        composer = event.text_area
        if isinstance(composer, Composer):
            self.drafts.keep()
            if composer.search is None:  # its border is the search's meanwhile
                root = self.records.get(composer.session or "")
                hint = shell_hint(composer.text, short_folder(root.cwd) if root else None)
                composer.border_subtitle = Content(hint) if hint else None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.switching.option_highlighted(event)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.switching.option_selected(event)

    @on(Switching.ShowWanted)
    async def _show_wanted(self) -> None:
        await self.switching.show_wanted()
        view = self.query_one_optional(TranscriptView)
        if view is not None and view.session is not None:
            self.shell.read(view.session, view.model)

    @on(Overview.InboxChanged)
    def _inbox_changed(self) -> None:
        self.overview.inbox_changed()

    @on(RequestsOnScreen.PermissionsChanged)
    async def _permissions_changed(self) -> None:
        await self.requests.changed()

    async def on_permission_prompt_answered(self, message: PermissionPrompt.Answered) -> None:
        await self.requests.answered(message)

    async def on_form_prompt_answered(self, message: FormPrompt.Answered) -> None:
        await self.requests.form_answered(message)

    def on_permission_prompt_key_after_answer(
        self, message: PermissionPrompt.KeyAfterAnswer
    ) -> None:
        self.keys.hold_ahead(message.key, message.character)

    def on_handed_on(self, message: HandedOn) -> None:
        self.keys.hold_ahead(message.key, message.character)

    def on_new_session_screen_key_after_choice(
        self, message: NewSessionScreen.KeyAfterChoice
    ) -> None:
        self.keys.hold_ahead(message.key, message.character)

    def on_composer_cycle_mode(self, message: Composer.CycleMode) -> None:
        self.run_worker(self.modes.cycle_mode(message.session), group="mode", exit_on_error=False)

    async def on_composer_cancel_requested(self, message: Composer.CancelRequested) -> None:
        await self.actions.escape_in_prompt(message.session)

    async def on_composer_interrupt_requested(self, message: Composer.InterruptRequested) -> None:
        await self.actions.interrupt(message.session)

    def on_composer_draft_shown(self, message: Composer.DraftShown) -> None:
        self._chips_changed(message.session)

    def on_shell_chips_drop_wanted(self, message: ShellChips.DropWanted) -> None:
        composer = self.query_one(Composer)
        if composer.session is not None:
            self.shell.shelf.drop(composer.session, message.key)

    def _chips_changed(self, session: str) -> None:
        """The chips of `session` changed: the bar shows them when the prompt is its."""
        composer = self.query_one_optional(Composer)
        bar = self.query_one_optional(ShellChips)
        if composer is not None and bar is not None and composer.session == session:
            bar.show(self.shell.shelf.of(session))

    # -- the engine's events (`EngineFollower`) -----------------------------------------------

    @on(FramesReady)
    async def _frames_ready(self) -> None:
        await self.follower.frames_ready()

    @on(StatusChanged)
    async def _status_changed(self, message: StatusChanged) -> None:
        await self.follower.status_changed(message.event)

    @on(PermissionChanged)
    async def _permission_changed(self, message: PermissionChanged) -> None:
        await self.follower.permission_changed(message.event)

    @on(SessionChanged)
    async def _session_changed(self, message: SessionChanged) -> None:
        await self.follower.session_changed(message.event)

    @on(AttentionChanged)
    async def _attention_changed(self) -> None:
        await self.follower.attention_changed()

    @on(ProblemReported)
    async def _problem_reported(self, message: ProblemReported) -> None:
        await self.follower.problem_reported(message.event)

    @on(SavingChanged)
    async def _saving_changed(self, message: SavingChanged) -> None:
        await self.follower.saving_changed(message.event)

    @on(LinkChanged)
    async def _link_changed(self) -> None:
        await self.follower.link_changed()

    @on(ResyncNeeded)
    async def _resync(self, message: ResyncNeeded) -> None:
        await self.follower.resync(message.event)

    # -- the composer -------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        if self.engine.service_stopped is not None:  # Enter starts it again, then sends
            self.run_worker(self._start_service_again(message), exit_on_error=False)
            return
        self._submit(message)

    def on_composer_line_typed(self, message: Composer.LineTyped) -> None:
        self.run_worker(self._send_line(message), group="input", exit_on_error=False)

    @reported("send the line to the login")
    async def _send_line(self, message: Composer.LineTyped) -> None:
        """Send a line to what reads input in the session (an agent's login); when it
        ended meanwhile, the line goes back in the prompt, sent nowhere."""
        if await self.engine.send_input(message.session, message.text):
            return
        composer = self.query_one(Composer)
        if composer.session == message.session and not composer.text:
            composer.text = message.text
        self.notify("The login has ended: that line was sent nowhere.", markup=False)

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
            if COCKPIT_NAMED[command[0]].takes_keys:
                # The keys typed behind it wait for its dialog (the composer hands back
                # those it got first, in order: `on_composer_key_after_command`).
                self.keys.hold_keys()
                self.query_one(Composer).handing_over = False
            work = self.run_slash(session, *command)
            self.run_worker(work, group="slash", exit_on_error=False)
            return
        shell = shell_command(message.text)
        if shell is not None:  # `!command`: the user's own, run in the engine beside the turn
            if shell:  # (`!` alone is never sent: the prompt keeps it)
                self.layout.follow_output(session)
                self.shell.run(session, shell)
            return
        # The turn runs in the engine: a prompt typed while the agent starts waits for it,
        # and a failure is a row in the session, never a lost prompt. The chips showing as
        # Enter was pressed go with it (and only those), then they go.
        self.layout.follow_output(session)
        self.engine.send(session, for_agent(unbang(message.text)), attach=message.attach)
        self.shell.shelf.sent(session, message.attach)

    @reported("run that command")
    async def run_slash(self, session: str, name: str, arguments: str) -> None:
        """Run one of Cockpit's own commands (its row of `COCKPIT_COMMANDS` says how); the
        keys held for its dialog go on once it is up (or it said why there is none)."""
        command = COCKPIT_NAMED.get(name)
        try:
            if command is not None and command.run is not None:
                await command.run(self, session, arguments)
        finally:
            if command is not None and command.takes_keys:
                self.keys.release_keys()

    def on_composer_key_after_command(self, message: Composer.KeyAfterCommand) -> None:
        if not self.keys.holding:  # no dialog waits for it (the command never ran)
            self.query_one(Composer).handing_over = False
        self.keys.hold_ahead(message.key, message.character)

    @reported("complete that", default=[])
    async def _complete(self, session: str, token: CompletionToken) -> list[Candidate]:
        """What the composer offers for `/command` or `@path` in `session`'s draft."""
        record = self.records.get(session)
        if record is None:
            return []
        if token.trigger == "/":
            agent = [
                SlashCommand(
                    clean_line(c.name), clean_line(c.description), clean_line(c.hint), cockpit=False
                )
                for c in map(read_command, record.commands or ())
                if isinstance(c, AgentCommand)
            ]
            return [
                Candidate(
                    f"{typed} " if c.hint else typed,
                    typed,
                    ("cockpit: " if c.cockpit else "")
                    + c.description
                    + (f"  [{c.hint}]" if c.hint else ""),
                )
                for typed, c in completions(agent, token.query)
            ]
        matches = await self.engine.find_files(record.id, token.query, 8)
        return [Candidate(format_mention(m.path) + " ", m.path, "", m.positions) for m in matches]
