"""The Cockpit TUI: the session rail, the transcript and the composer, over the engine.

The app holds no ACP or SQL code: it calls the engine's interface and folds the engine's
events (posted to the app as messages, in order) into its widgets.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Footer, OptionList, Static, TextArea

from cockpit.api import (
    DEFAULT_AGENT,
    AttentionEvent,
    EngineAPI,
    EngineEvent,
    FramesEvent,
    PermissionEvent,
    PermissionRequest,
    ProblemEvent,
    SavingEvent,
    SessionEvent,
    Status,
    StatusEvent,
)
from cockpit.paths import bundled_dir, config_dir
from cockpit.text.mentions import format_mention
from cockpit.text.textout import describe_error, plan_lines, session_title
from cockpit.ui.attention import notification, title_for, window_title
from cockpit.ui.bubbles import AgentBubble, BubbleWidget, ToolCard
from cockpit.ui.commands import ActionCommands, AgentCommands, SessionCommands
from cockpit.ui.composer import Candidate, CompletionMenu, Composer
from cockpit.ui.dialog import Palette
from cockpit.ui.failures import reported
from cockpit.ui.permission import PermissionPrompt
from cockpit.ui.rail import RailEntry, SessionRail, rail_title
from cockpit.ui.screens import (
    ConfirmScreen,
    HelpScreen,
    InboxItem,
    InboxScreen,
    NewSessionChoice,
    NewSessionScreen,
    OptionsScreen,
    PlanScreen,
    RenameScreen,
    TextScreen,
)
from cockpit.ui.settings import load_settings, save_settings, settings_path
from cockpit.ui.slash import COCKPIT_COMMANDS, SlashCommand, matching, parse_slash, policy_rule
from cockpit.ui.themes import (
    ANSI_ON_DARK,
    ANSI_ON_LIGHT,
    CONTENT_STYLES,
    DEFAULT_THEME,
    load_themes,
    startup_theme,
)
from cockpit.ui.transcript import TranscriptView
from cockpit.ui.viewmodel import (
    CompletionToken,
    OptionChoice,
    RailState,
    StatusPart,
    clean_line,
    fit_status,
    mode_option_id,
    next_needing,
    option_choices,
    quit_question,
    rail_state,
    short_folder,
    status_parts,
)
from store import Frame, SessionBusy, SessionRecord

COCKPIT_NAMES = frozenset(command.name for command in COCKPIT_COMMANDS)
"""Slash commands Cockpit runs itself; any other `/word` goes to the agent."""

NARROW = 100
"""Below this many columns the rail shows glyphs and titles only."""

STATE_VARIABLES = {
    RailState.NEEDS_YOU: "status-needs-you",
    RailState.ERROR: "status-error",
    RailState.UNREAD: "status-unread",
    RailState.WORKING: "status-working",
    RailState.STARTING: "status-starting",
    RailState.IDLE: "status-idle",
    RailState.CLOSED: "status-closed",
}

EngineFactory = Callable[[], Awaitable[EngineAPI]]


@functools.cache
def default_variables() -> dict[str, str]:
    """The app variables of the default theme."""
    themes, _ = load_themes(bundled_dir("themes"), None)
    return next(dict(theme.variables) for theme in themes if theme.name == DEFAULT_THEME)


class EngineMessage(Message):
    """An engine event, delivered on the app's message queue (so in order)."""

    def __init__(self, event: EngineEvent) -> None:
        super().__init__()
        self.event = event


class FramesReady(Message):
    """Frames are waiting in the app's buffer."""


class ShowWanted(Message):
    """A session was chosen: read its transcript (the newest chosen, once)."""


class PermissionsChanged(Message):
    """Requests of the session on screen were asked or answered: show its prompt again,
    once for however many came meanwhile (an agent may ask a thousand at once)."""


class InboxChanged(Message):
    """What waits for the user changed while the inbox is open: list it again, once."""


DRAFT_SAVE_DELAY = 1.0
"""Seconds after the last keystroke before a draft is saved."""

SESSION_SAVE_DELAY = 2.0
"""Seconds after a switch before the session to reopen on is saved."""

INTERRUPT_AGAIN = 2.0
"""Seconds within which a second Ctrl+C (with nothing to cancel or clear) quits."""

TURN_RUNNING = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING})


class StatusLine(Widget):
    """The line above the composer: the turn state first, then as much of mode, model,
    options, usage and agent as its width holds (fitted again on every resize)."""

    DEFAULT_CSS = "StatusLine { height: 1; }"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.parts: list[StatusPart] = []

    def show(self, parts: list[StatusPart]) -> None:
        if parts != self.parts:
            self.parts = parts
            self.refresh()

    def render(self) -> Content:
        return Content(fit_status(self.parts, self.content_size.width))


def same_dialog(screen: Screen[Any], opened: Screen[Any]) -> bool:
    """True when `opened` is the dialog `screen` would open again (the same kind, and for a
    question, the same question)."""
    return type(screen) is type(opened) and getattr(screen, "question", None) == getattr(
        opened, "question", None
    )


def focused_prompt(focused: Widget | None) -> PermissionPrompt | None:
    """The permission prompt that holds the keyboard (itself or one of its parts)."""
    if focused is None:
        return None
    return next((n for n in (focused, *focused.ancestors) if isinstance(n, PermissionPrompt)), None)


def freeze_startup_objects() -> None:
    """Put everything alive after the imports (modules, classes, Textual's and Rich's
    tables: about 100,000 objects that live as long as the process) out of the garbage
    collector's reach. A long stream otherwise sets off full collections that walk all of
    them, tens of milliseconds each, while a key waits. Once per process, before the app
    runs: the command line and the benchmark call it, tests do not."""
    gc.collect()
    gc.freeze()


class CockpitApp(App[None]):
    """Many agent sessions, one screen."""

    CSS_PATH = str(bundled_dir("themes") / "cockpit.tcss")
    TITLE = "Cockpit"
    COMMANDS: ClassVar = App.COMMANDS | {SessionCommands, AgentCommands, ActionCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: handled as it arrives, so the dialog is up before the next key is
        # routed (Enter typed right after Ctrl+N creates the session, never sends a draft)
        Binding("ctrl+n", "new_session", "New", priority=True),
        Binding("f2", "rename_session", "Rename"),
        Binding("f4", "close_session", "Close"),
        Binding("f8", "delete_session", "Delete", show=False),
        Binding("ctrl+up", "previous_session", "Prev", show=False),
        Binding("ctrl+down", "next_session", "Next", show=False),
        Binding("ctrl+b", "toggle_rail", "Rail"),
        Binding("ctrl+end", "jump_end", "Newest", show=False),
        Binding("f3", "copy_last", "Copy", show=False),
        Binding("ctrl+o", "inbox", "Inbox"),
        Binding("ctrl+t", "options", "Options", show=False),
        Binding("ctrl+g", "next_needing", "Next needing you", show=False),
        Binding("f1", "help", "Help"),
        Binding("escape", "escape", "Cancel turn", show=False),
        Binding("ctrl+c", "interrupt", "Cancel turn", show=False),
    ]

    def __init__(
        self,
        engine: EngineAPI | EngineFactory,
        *,
        folder: Path,
        agent: str | None = None,
        clock: Callable[[], float] = time.time,
        blink: bool = True,
        settings_file: Path | None = None,
        themes_dir: Path | None = None,
    ) -> None:
        super().__init__()
        self._engine: EngineAPI | None = None if callable(engine) else engine
        self._engine_factory: EngineFactory | None = engine if callable(engine) else None
        self.folder = folder
        self.agent = agent
        self.clock = clock
        self.blink = blink
        self.settings_file = settings_file or settings_path()
        self.themes_dir = themes_dir if themes_dir is not None else config_dir() / "themes"
        self.current: str | None = None
        """The session chosen: the rail highlights it and the composer writes to it (its
        transcript follows as soon as its page is read)."""
        self.records: dict[str, SessionRecord] = {}
        self._wanted: tuple[str, bool] | None = None
        """The session to show next, and whether the keyboard goes to it; however many are
        chosen while one is read (a held Ctrl+Down), only the newest is shown."""
        self._show_posted = False
        self._drafts: dict[str, str] = {}
        """What the user wrote for each session and has not sent."""
        self._draft_for: str | None = None
        """The session the composer's text belongs to."""
        self._unsaved_drafts: set[str] = set()
        self._draft_timer: Timer | None = None
        self._details: dict[str, str] = {}
        """The last thing each session's status said (why an agent failed to start...)."""
        self._session_timer: Timer | None = None
        self._interrupted = 0.0
        """When Ctrl+C last found nothing to cancel or clear (a second one offers to quit)."""
        self._title_shown = ""
        self.sent_sequences: list[str] = []
        """Escape sequences sent to the terminal (titles, notifications), newest last."""
        self._frames: dict[str, list[Frame]] = {}
        self._frames_posted = False
        self._turn_ended: dict[str, float] = {}
        """When each session's last turn ended, by the engine's clock (for the inbox)."""
        self._stale: set[str] = set()
        """Background sessions whose record changed and has not been read yet."""
        self._stale_reader: asyncio.Task[None] | None = None
        self._permissions_posted = False
        self._permissions_focus = False
        """A request was asked since the prompt was last shown: the keyboard may go to it."""
        self._permissions_left = False
        """The request answered since had the keyboard: it goes to the next one."""
        self._inbox_posted = False
        self._asking: set[str] = set()
        """Sessions whose questions have rung already: the ones that come while the first
        waits do not ring again (a thousand asked at once rang a thousand bells)."""
        self._settings: dict[str, Any] = {}
        self._load_themes()

    @property
    def engine(self) -> EngineAPI:
        assert self._engine is not None, "the engine is not open yet"
        return self._engine

    # -- layout -------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield SessionRail(id="rail")
            with Vertical(id="main"):
                yield StatusLine(id="status")
                yield CompletionMenu(id="completion")
                yield Static("▼ new output below — Ctrl+End to jump", id="new-output")
                yield Composer(id="composer", blink=self.blink)
        yield Footer()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Cockpit's own variables, from the default theme, for any theme that lacks them
        (Textual asks before `__init__` has run, so this reads the bundled file)."""
        return default_variables()

    async def on_mount(self) -> None:
        if self._engine is None:
            assert self._engine_factory is not None
            self._engine = await self._engine_factory()
        for problem in self._problems:
            self.notify(problem, severity="warning", timeout=10, markup=False)
        transcript = TranscriptView(self.engine, id="transcript")
        await self.query_one("#main", Vertical).mount(transcript, before=0)
        self.engine.subscribe(self._on_engine_event)
        self.query_one("#new-output").display = False
        composer = self.query_one(Composer)
        composer.menu = self.query_one(CompletionMenu)
        composer.menu.display = False
        composer.completer = self._complete
        self._apply_width(self.size.width)
        await self._reload_records()
        self._drafts = {r.id: r.draft for r in self.records.values() if r.draft}
        last = self.records.get(str(self._settings.get("last_session")))
        reopen = last or (self._ordered()[0] if self.records else None)
        if reopen is None or (self.agent and reopen.agent != self.agent):
            # `cockpit --agent NAME` is never ignored: with sessions stored, a new session
            # with that agent, unless the one that reopens already runs it.
            await self._create_session(self.agent or DEFAULT_AGENT, str(self.folder))
        if self.current is None and reopen is not None:
            self.select_session(reopen.id)
        self.set_interval(30, self._refresh_rail)
        self._focus_session()

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

    async def action_quit(self) -> None:
        """Ctrl+Q: quit, after asking when a turn runs or a question waits (every agent
        stops with Cockpit, for now)."""
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

    def open_screen(self, screen: Screen[Any], callback: Any = None) -> None:
        """Open a dialog unless the same one is open already: a key pressed twice in one
        burst (Ctrl+O Ctrl+O, a held F1) opens it once."""
        if any(same_dialog(screen, opened) for opened in self.screen_stack):
            return
        self.push_screen(screen, callback)

    def action_command_palette(self) -> None:
        """Ctrl+P: the command palette, unless one is open under another dialog (Textual
        opened a second one there, and died of the duplicate id)."""
        if self.use_command_palette and not any(
            isinstance(screen, CommandPalette) for screen in self.screen_stack
        ):
            self.push_screen(Palette(id="--command-palette"))

    def _running_turns(self) -> int:
        busy = (Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING)
        return sum(self.engine.status(session) in busy for session in self.records)

    # -- themes -------------------------------------------------------------------------------

    def _load_themes(self) -> None:
        """Register the bundled and user themes and choose the saved one; a broken theme or
        settings file is reported once the screen is up, and never stops the app."""
        themes, problems = load_themes(bundled_dir("themes"), self.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        self._settings, broken = load_settings(self.settings_file)
        if self._settings.get("tool_cards") in ("failures", "always", "never"):
            ToolCard.default_policy = str(self._settings["tool_cards"])
        self._problems = [*problems, *([broken] if broken else [])]
        self.ansi_theme_dark, self.ansi_theme_light = ANSI_ON_DARK, ANSI_ON_LIGHT
        self.console.push_theme(CONTENT_STYLES)
        saved, colours = self._settings.get("theme"), self.console.color_system
        self.theme = startup_theme(saved, colours, self.available_themes)

    def watch_theme(self, theme: str) -> None:
        if self._settings.get("theme") != theme and self.is_mounted(self):
            self._settings["theme"] = theme
            try:
                save_settings(self.settings_file, self._settings)
            except OSError as error:
                self.notify(
                    f"Could not save the theme choice: {error}", severity="warning", markup=False
                )
        if self.is_mounted(self):
            self._restyle_rail()

    def is_mounted(self, widget: Any) -> bool:
        return bool(getattr(widget, "_is_mounted", False))

    def _restyle_rail(self) -> None:
        variables = self.get_css_variables()
        rail = self.query_one(SessionRail)
        rail.set_state_colours(
            {state: variables.get(name, "") for state, name in STATE_VARIABLES.items()}
        )
        rail.restyle()

    # -- sessions -----------------------------------------------------------------------------

    async def _reload_records(self) -> None:
        self.records = {record.id: record for record in await self.engine.sessions()}

    def _ordered(self) -> list[SessionRecord]:
        return sorted(self.records.values(), key=lambda record: (-record.created, record.id))

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

    def session_choices(self) -> list[tuple[str, str, str]]:
        """(id, title, details) of every session, for the command palette."""
        return [
            (r.id, clean_line(session_title(r)), clean_line(f"{r.agent} · {short_folder(r.cwd)}"))
            for r in self._ordered()
        ]

    def select_session(self, session: str, focus: bool = True) -> None:
        """Choose a session: at once the rail highlights it, the status line and the composer
        (its own draft) are its, and the engine counts it as seen; its transcript is read
        next, once, however many sessions are chosen meanwhile (a held Ctrl+Down). The
        keyboard then goes to its pending request, else to the composer (`focus=False`
        leaves it where it is: on the rail, while the user walks it)."""
        if session not in self.records or not self.is_running or not self.query(Composer):
            return  # shutting down (the rail highlights a last time): nothing to show
        if session != self.current:
            self._take_draft(session)
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
    @reported("show the session")
    async def _show_wanted(self) -> None:
        self._show_posted = False
        wanted, self._wanted = self._wanted, None
        if wanted is None or wanted[0] != self.current:
            return
        session, focus = wanted
        if session in self._stale:  # its record changed in the background: current first
            self._stale.discard(session)
            if await self._fresh(session) is None:
                return
        views = self.query(TranscriptView)
        if not views:  # the app is closing: its widgets are going
            return
        view = views.first()
        await view.show_session(session)
        composers = self.query(Composer)
        if not composers:  # the app closed while the page was read
            return
        composers.first().prompts.reset(b.text for b in view.model if b.kind == "user")
        self._refresh_rail()
        self._refresh_status()
        await self._show_permissions()
        if focus:
            self._focus_session()

    def _focus_session(self) -> None:
        """Put the keyboard where the session on screen needs it: on its oldest pending
        request, else on the composer."""
        prompts = list(self.query_one(TranscriptView).prompts.values())
        if prompts:
            prompts[0].focus()
        else:
            self.query_one(Composer).focus()

    # -- drafts and the last session -----------------------------------------------------------

    def _take_draft(self, session: str) -> None:
        """Give the composer to `session`: what it holds is kept as the draft of the session
        it was written for, and `session`'s own draft comes back."""
        composer = self.query_one(Composer)
        self._keep_draft()
        self._draft_for = session
        composer.show_draft(self._drafts.get(session, ""))

    def _keep_draft(self) -> None:
        """Remember the composer's text as its session's draft (saved soon)."""
        owner = self._draft_for
        composers = self.query(Composer)
        if owner is None or not composers:  # none yet, or gone at shutdown
            return
        text = composers.first().text
        if self._drafts.get(owner, "") != text:
            self._drafts[owner] = text
            self._unsaved_drafts.add(owner)
            if self._draft_timer is None:
                self._draft_timer = self.set_timer(DRAFT_SAVE_DELAY, self._on_draft_timer)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if isinstance(event.text_area, Composer):
            self._keep_draft()

    def _on_draft_timer(self) -> None:
        self._draft_timer = None
        self._save_drafts()

    def _save_drafts(self) -> None:
        """Keep the drafts that changed (the store writes them with its next flush, so a
        crash loses at most a second or so of typing)."""
        while self._unsaved_drafts:
            session = self._unsaved_drafts.pop()
            if session in self.records:
                self.engine.save_draft(session, self._drafts.get(session, ""))

    def _remember_session(self) -> None:
        """The session on screen is the one Cockpit opens on next time (saved soon)."""
        if self._settings.get("last_session") != self.current:
            self._settings["last_session"] = self.current
            if self._session_timer is None:
                self._session_timer = self.set_timer(SESSION_SAVE_DELAY, self._save_last_session)

    def _save_last_session(self) -> None:
        self._session_timer = None
        try:
            save_settings(self.settings_file, self._settings)
        except OSError as error:
            self.log.warning(f"could not save the settings: {error}")

    @reported("open the session")
    async def _create_session(self, agent: str, folder: str) -> None:
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

    # -- engine events ------------------------------------------------------------------------

    def _on_engine_event(self, event: EngineEvent) -> None:
        """The engine's listener. Frames are coalesced: they wait in a buffer and ONE
        message at a time asks the app to take all of them, so a fast stream (or eight)
        never queues thousands of messages ahead of the user's keys; anything else goes
        through the queue after the frames that came before it."""
        if isinstance(event, FramesEvent):
            self._frames.setdefault(event.session, []).extend(event.frames)
            if not self._frames_posted:
                self._frames_posted = True
                self.post_message(FramesReady())
            return
        self.post_message(EngineMessage(event))

    @reported("show what the agent sent")
    async def on_frames_ready(self, message: FramesReady) -> None:
        self._frames_posted = False
        pending, self._frames = self._frames, {}
        if not self.is_running:  # shutting down (it may start during an await)
            return
        view = self.query_one(TranscriptView)
        for session, frames in pending.items():
            if session == view.session:
                await view.apply_frames(frames)

    @reported("follow the sessions")
    async def on_engine_message(self, message: EngineMessage) -> None:
        if not self.is_running:  # shutting down (stopping agents): the widgets may be gone
            return
        event = message.event
        if isinstance(event, FramesEvent):
            self._on_engine_event(event)
        elif isinstance(event, StatusEvent):
            await self._on_status(event)
        elif isinstance(event, PermissionEvent):
            session = event.request.session
            self._refresh_rail()
            if session == self.query_one(TranscriptView).session:
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
        elif isinstance(event, SessionEvent):
            if event.session == self.current or event.session not in self.records:
                await self._fresh(event.session)  # keys may act on it next: read it now
                self._refresh_rail()
                if event.session == self.current:
                    self._refresh_status()
            else:
                self._refresh_later(event.session)
        elif isinstance(event, AttentionEvent):
            self._refresh_rail()
        elif isinstance(event, ProblemEvent):
            self.notify(clean_line(event.message), severity="error", timeout=10, markup=False)
        elif isinstance(event, SavingEvent):  # the status line says so while it lasts
            self._refresh_status()
            if event.problem is None:
                self.notify("The transcript is saved again.", timeout=5, markup=False)

    async def _on_status(self, event: StatusEvent) -> None:
        self._details[event.session] = event.detail
        finished = event.status in (Status.READY, Status.EXITED, Status.ERROR, Status.CLOSED)
        if finished and event.session == self.query_one(TranscriptView).session:
            await self.query_one(TranscriptView).finish_live()
        if event.turn_ended:
            self._turn_ended[event.session] = self.engine.now()
            self._alert(event.session, "finished a turn")
        if event.session in self.records:  # the live status is the engine's: no store read
            self._refresh_rail()
            if event.session == self.current:
                self._refresh_status()

    def report_failure(self, what: str, error: Exception) -> None:
        """Something the screen asked of the engine or the store failed: the user reads why
        in the session on screen (or in a notice when even that cannot be written), it goes
        to the log with its traceback, and the app goes on."""
        logging.getLogger(__name__).error("could not %s", what, exc_info=error)
        message = f"Cockpit could not {what}: {describe_error(error)}"
        if self._engine is None or not self.is_running:
            return
        self.run_worker(self.engine.report(self.current, message), group="report")

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

    async def _fresh(self, session: str) -> SessionRecord | None:
        try:
            record = await self.engine.session(session)
        except KeyError:
            self.records.pop(session, None)
            return None
        self.records[session] = record
        return record

    def _refresh_status(self) -> None:
        if not self.is_running:
            return
        status = self.query_one("#status", StatusLine)
        record = self.records.get(self.current or "")
        if record is None:
            status.show([])
            return
        spec = self.engine.agent_of(record)
        waiting = self.engine.pending_count(record.id)
        live = self.engine.status(record.id)
        detail = self._details.get(record.id, "")
        status.show(
            status_parts(record, spec.label, live, waiting, detail, self.engine.saving_problem)
        )

    @on(PermissionsChanged)
    @reported("show the request")
    async def _permissions_changed(self) -> None:
        self._permissions_posted = False
        focus, self._permissions_focus = self._permissions_focus, False
        left, self._permissions_left = self._permissions_left, False
        if self.is_running:
            await self._show_permissions(focus=focus, left=left)

    async def _show_permissions(self, focus: bool = False, left: bool = False) -> None:
        """Show the oldest pending request of the session on screen inline; put the keyboard
        on a new one when the user is not in the middle of writing a prompt, and on the next
        one when the request answered had it (`left`: it may have gone to the composer
        meanwhile)."""
        view = self.query_one(TranscriptView)
        if view.session is None:
            return
        first = self.engine.first_pending(view.session)
        leaving = focused_prompt(view.screen.focused)
        if leaving is not None and (first is None or first.id != leaving.request.id):
            # Removed with the keyboard on it, Textual would hand the focus to the first
            # bubble beside it and scroll the transcript to the top: move it first, now
            # (`focus()` waits for the next idle, after the removal).
            view.screen.set_focus(self.query_one(Composer), scroll_visible=False)
        added = await view.show_permissions(first, self.engine.pending_count(view.session))
        if added is not None and focus and not self.query_one(Composer).text.strip():
            added.focus()
        elif (leaving is not None or left) and view.prompts:
            self._focus_session()  # the next request waiting, oldest first

    @reported("answer the request")
    async def on_permission_prompt_answered(self, message: PermissionPrompt.Answered) -> None:
        with contextlib.suppress(KeyError):  # already answered (cancelled, or by policy)
            await self.engine.answer_permission(message.request.id, message.option_id)
        self.query_one(Composer).focus()

    # -- attention ----------------------------------------------------------------------------

    def _alert(self, session: str, what: str) -> None:
        """A session needs the user: the bell, and a desktop notification when the terminal
        is not focused (a setting turns notifications off)."""
        if session == self.current and self.app_focus:
            return
        self.bell()
        if not self.app_focus and self._settings.get("notify", True):
            record = self.records.get(session)
            title = session_title(record) if record else "Cockpit"
            self._write_terminal(notification(title, what, in_tmux=bool(os.environ.get("TMUX"))))

    def _write_terminal(self, sequence: str) -> None:
        """Send an escape sequence to the terminal (not drawn: the driver writes it as is)."""
        driver = getattr(self, "_driver", None)
        if driver is not None and not self.is_headless:
            driver.write(sequence)
        self.sent_sequences.append(sequence)

    def _update_title(self, entries: list[RailEntry]) -> None:
        waiting = sum(1 for e in entries if e.state == RailState.NEEDS_YOU)
        unread = sum(1 for e in entries if e.state == RailState.UNREAD)
        title = title_for(waiting, unread)
        if title != self._title_shown:
            self._title_shown = title
            self._write_terminal(window_title(title))
            self.query_one(SessionRail).border_title = rail_title(waiting, unread)

    # -- the inbox ----------------------------------------------------------------------------

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

    def _title_of(self, session: str) -> str:
        record = self.records.get(session)
        return session_title(record) if record else session

    def action_inbox(self) -> None:
        """Show everything that waits on the user, across all sessions."""

        @reported("answer the request")
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
        view = self.query_one(TranscriptView)
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

    # -- the composer -------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        if self.current is None:
            return
        command = parse_slash(message.text)
        if command is not None and command[0] in COCKPIT_NAMES:
            self.run_worker(self._run_slash(*command), group="slash", exit_on_error=False)
            return
        # The turn runs in the engine: a prompt typed while the agent starts waits for it,
        # and a failure is a row in the session, never a lost prompt.
        self.engine.send(self.current, message.text)

    @reported("complete that", default=[])
    async def _complete(self, token: CompletionToken) -> list[Candidate]:
        """What the composer offers for `/command` or `@path`."""
        record = self.records.get(self.current or "")
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

    @reported("run that command")
    async def _run_slash(self, name: str, arguments: str) -> None:
        """Run one of Cockpit's own commands."""
        session = self.current
        if session is None:
            return
        if name == "new":
            if arguments:
                await self._create_session(arguments, str(self.folder))
            else:
                self.action_new_session()
        elif name == "rename":
            if arguments:
                await self.engine.rename(session, arguments)
            else:
                self.action_rename_session()
        elif name == "export":
            await self._export(session, arguments)
        elif name == "theme":
            if arguments in self.available_themes:
                self.theme = arguments
            else:
                self.notify(
                    f"No theme {arguments!r}; try: {', '.join(sorted(self.available_themes))}",
                    severity="warning",
                    markup=False,
                )
        elif name == "policy":
            try:
                if (rule := policy_rule(arguments)) is not None:
                    text = await self.engine.set_session_policy(session, *rule)
                    self.notify(text, timeout=4, markup=False)
                else:
                    text = await self.engine.session_policy(session)
                    self.open_screen(TextScreen("Permission rules", text))
            except (ValueError, KeyError) as error:
                self.notify(str(error), severity="error", markup=False)
        elif name == "mode":
            await self._set_mode_named(arguments)
        elif name == "options":
            self.action_options()
        elif name == "inbox":
            self.action_inbox()
        elif name == "close":
            await self.action_close_session()
        elif name == "help":
            self.action_help()

    async def _export(self, session: str, target: str) -> None:
        """Write the transcript as Markdown (where, the engine decides: Cockpit's `exports/`
        folder unless told), never over a file without asking."""

        @reported("export the transcript")
        async def write(replace: bool | None) -> None:
            if replace is False:
                return
            try:
                path = await self.engine.export(session, target, replace=bool(replace))
            except FileExistsError as error:  # ask, then write again
                question = ConfirmScreen(f"Replace {error.filename}?", "Replace", "Keep")
                self.open_screen(question, write)
                return
            except OSError as error:
                self.notify(f"Could not export: {error}", severity="error", markup=False)
                return
            self.notify(f"Exported to {path}", timeout=2, markup=False)

        await write(None)

    # -- modes and options --------------------------------------------------------------------

    def _choices(self, record: SessionRecord) -> list[OptionChoice]:
        return option_choices(record)

    def on_composer_cycle_mode(self) -> None:
        self.run_worker(self._cycle_mode(), group="mode", exit_on_error=False)

    @reported("switch the mode")
    async def _cycle_mode(self) -> None:
        """Shift+Tab: the agent's next mode."""
        record = self.records.get(self.current or "")
        if record is None:
            return
        modes = [
            c
            for c in self._choices(record)
            if c.config_id is None or c.config_id == mode_option_id(record)
        ]
        if not modes:
            self.notify("This agent has no modes.", timeout=2)
            return
        current = next((i for i, c in enumerate(modes) if c.current), -1)
        await self._apply_choice(modes[(current + 1) % len(modes)])

    async def _set_mode_named(self, name: str) -> None:
        record = self.records.get(self.current or "")
        if record is None:
            return
        modes = [
            c
            for c in self._choices(record)
            if c.config_id is None or c.config_id == mode_option_id(record)
        ]
        wanted = next(
            (c for c in modes if name.lower() in (str(c.value).lower(), c.label.lower())), None
        )
        if wanted is None:
            names = ", ".join(clean_line(c.label) for c in modes) or "none"
            self.notify(f"Modes: {names}", timeout=4, markup=False)
            return
        await self._apply_choice(wanted)

    async def _apply_choice(self, choice: OptionChoice) -> None:
        session = self.current
        if session is None:
            return
        try:
            if choice.config_id is None:
                await self.engine.set_mode(session, str(choice.value))
            else:
                await self.engine.set_config_option(session, choice.config_id, choice.value)
        except Exception as error:
            self.notify(
                f"The agent refused: {clean_line(str(error))}", severity="error", markup=False
            )
            return
        self.notify(clean_line(choice.label), timeout=2, markup=False)

    def action_options(self) -> None:
        """Choose any mode or config option the agent offers."""
        record = self.records.get(self.current or "")
        if record is None:
            return

        async def chosen(choice: OptionChoice | None) -> None:
            if choice is not None:
                await self._apply_choice(choice)

        self.open_screen(OptionsScreen(self._choices(record)), chosen)

    @reported("show the plan")
    async def action_show_plan(self, session: str | None = None) -> None:
        """The latest plan of a session (the highlighted one in the rail, or this one)."""
        session = session or self.current
        if session is None:
            return
        row = await self.engine.last_row(session, "plan")
        self.open_screen(
            PlanScreen(self._title_of(session), plan_lines(row.payload if row else None))
        )

    def on_session_rail_plan_requested(self, message: SessionRail.PlanRequested) -> None:
        self.run_worker(self.action_show_plan(message.session), group="plan", exit_on_error=False)

    async def on_composer_cancel_requested(self) -> None:
        await self.action_cancel_turn()

    def on_transcript_view_unseen(self, message: TranscriptView.Unseen) -> None:
        for line in self.query("#new-output"):  # none left at shutdown
            line.display = message.unseen

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "rail" and event.option.id and event.option.id != self.current:
            # Walking the rail shows each session; the keyboard stays on the rail.
            self.select_session(event.option.id, focus=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "rail":
            self._focus_session()
        elif event.option_list.id == "completion":
            self.query_one(Composer).accept(event.option_index)

    # -- layout actions -----------------------------------------------------------------------

    def on_resize(self, event: Any) -> None:
        self._apply_width(event.size.width)

    def _apply_width(self, width: int) -> None:
        rails = self.query(SessionRail)
        if not rails:  # shutting down
            return
        rail = rails.first()
        narrow = width < NARROW
        self.set_class(narrow, "-narrow")
        if rail.compact != narrow:
            rail.compact = narrow
            rail.restyle()

    def action_toggle_rail(self) -> None:
        """Show or hide the session rail."""
        rail = self.query_one(SessionRail)
        rail.display = not rail.display

    async def action_jump_end(self) -> None:
        """Scroll to the newest output."""
        await self.query_one(TranscriptView).jump_to_end()

    def action_focus_next(self) -> None:
        """Tab: the screen's focus chain with the prompt just before the transcript."""
        self._focus_step(1)

    def action_focus_previous(self) -> None:
        """Shift+Tab: back along the same chain (the prompt itself uses it for modes)."""
        self._focus_step(-1)

    def _focus_step(self, step: int) -> None:
        """Tab from the prompt reaches the transcript at once and Shift+Tab comes back; a
        bubble focused in the transcript counts as the transcript (they are not in the
        chain: Up and Down move between them)."""
        screen = self.screen
        chain = screen.focus_chain
        transcript = next(iter(screen.query(TranscriptView)), None)
        composer = next(iter(screen.query(Composer)), None)
        focused = screen.focused
        if transcript is not None and composer is not None and focused is not None:
            if transcript in focused.ancestors:
                focused = transcript
            if transcript in chain and composer in chain and focused in chain:
                chain.remove(composer)
                chain.insert(chain.index(transcript), composer)
                chain[(chain.index(focused) + step) % len(chain)].focus()
                return
        if step > 0:
            screen.focus_next()
        else:
            screen.focus_previous()

    def action_help(self) -> None:
        """Show every key."""
        self.open_screen(HelpScreen())

    # -- session actions ----------------------------------------------------------------------

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

    def action_rename_session(self) -> None:
        """Give the session on screen a title."""
        record = self.records.get(self.current or "")
        if record is None:
            return

        async def renamed(title: str | None) -> None:
            if title:
                await self.engine.rename(record.id, title)

        self.open_screen(RenameScreen(clean_line(session_title(record))), renamed)

    @reported("close the session")
    async def action_close_session(self) -> None:
        """Stop the agent of the session on screen; its transcript stays."""
        if self.current is not None:
            await self.engine.stop(self.current)
            self.notify("Session closed: its agent stopped. A prompt starts it again.", timeout=4)

    def action_delete_session(self) -> None:
        """Delete the session on screen, after asking."""
        record = self.records.get(self.current or "")
        if record is None:
            return

        @reported("delete the session")
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
            self._draft_for = None
            self.current = None
            if self.records:
                self.select_session(self._ordered()[0].id)
            else:
                await self._create_session(self.agent or DEFAULT_AGENT, str(self.folder))

        self.open_screen(
            ConfirmScreen(f"Delete “{clean_line(session_title(record))}” and its transcript?"),
            confirmed,
        )

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
    async def action_cancel_turn(self) -> None:
        """Cancel the running turn of the session on screen (the status line says so until
        the agent has ended it)."""
        if self.current is not None:
            await self.engine.cancel(self.current)

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
