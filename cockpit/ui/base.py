"""The state every part of Cockpit's app shares, and what every part reaches for: the
engine, the session records, the settings and the themes, dialogs, and failures.

The app is split by job into classes over this one, each in its own module (the rail and
status line, drafts, requests on screen, switching sessions, engine events, session
actions, modes, layout); `cockpit.ui.app.CockpitApp` puts them together. They are classes
rather than collaborators because Textual finds actions, message handlers and watchers on
the app itself. All of the app's state is made here, in one place, so each job reads what
another keeps without reaching into it."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App
from textual.command import CommandPalette
from textual.screen import Screen
from textual.theme import ThemeProvider
from textual.timer import Timer
from textual.widget import Widget

from cockpit.api import DEFAULT_AGENT, AgentSpec, EngineAPI
from cockpit.compat.textual_private import keep_timer_delays_positive, widget_is_mounted
from cockpit.config_file import ConfigError
from cockpit.paths import bundled_dir, config_dir, settings_path
from cockpit.text.textout import describe_error, session_title
from cockpit.ui.composer import Composer
from cockpit.ui.dialog import Palette
from cockpit.ui.engine_messages import EngineListener
from cockpit.ui.one_line import clean_line, short_folder
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.rail import SessionRail
from cockpit.ui.session_states import RailState
from cockpit.ui.settings import Settings, SettingsFile
from cockpit.ui.themes import (
    ANSI_ON_DARK,
    ANSI_ON_LIGHT,
    CONTENT_STYLES,
    DEFAULT_THEME,
    load_themes,
    startup_theme,
)
from cockpit.ui.tool_card import ToolCard
from cockpit.ui.transcript import TranscriptView
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

EngineFactory = Callable[[], Awaitable[EngineAPI]]

TOOL_CARDS_DEFAULT = ToolCard.default_policy
"""How tool cards open when the settings do not say."""


@functools.cache
def default_variables() -> dict[str, str]:
    """The app variables of the default theme."""
    themes, _ = load_themes(bundled_dir("themes"), None)
    return next(dict(theme.variables) for theme in themes if theme.name == DEFAULT_THEME)


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


class CockpitBase(App[None]):
    """Many agent sessions, one screen: the shared state and the shared means."""

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
    ) -> None:
        keep_timer_delays_positive()  # before any timer: a negative one froze the screen
        super().__init__()
        self._engine: EngineAPI | None = None if callable(engine) else engine
        self._engine_factory: EngineFactory | None = engine if callable(engine) else None
        self.folder = folder
        self.agent = agent.name if isinstance(agent, AgentSpec) else agent
        """The agent Cockpit was opened with (`--agent`), by name."""
        self._agent_spec = agent if isinstance(agent, AgentSpec) else None
        """How it runs when given as a command (`--agent-cmd`), which the engine's own
        registry does not know (the service's, in another process)."""
        self.clock = clock
        self.blink = blink
        self.settings_file = settings_file or settings_path()
        self._settings_source = SettingsFile(self.settings_file)
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
        self._unsaved_drafts: set[str] = set()
        self._drafts_too_long: set[str] = set()
        """The sessions whose draft is past the bound (kept on screen, not saved; the user
        was told once)."""
        self._draft_timer: Timer | None = None
        self._details: dict[str, str] = {}
        """The last thing each session's status said (why an agent failed to start...)."""
        self._starting_since: dict[str, float] = {}
        """When each session whose agent is starting began to, by the app's clock (or when
        this screen first saw it starting)."""
        self._starting_timer: Timer | None = None
        """Counts the seconds on the status line, only while some agent starts."""
        self._session_timer: Timer | None = None
        self._interrupted = 0.0
        """When Ctrl+C last found nothing to cancel or clear (a second one offers to quit)."""
        self._title_shown = ""
        self.sent_sequences: list[str] = []
        """Escape sequences sent to the terminal (titles, notifications), newest last."""
        self.engine_listener = EngineListener(self.post_message)
        """What the app subscribes to the engine (it holds frames until they are taken)."""
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
        self._settings = Settings()
        """The settings as Cockpit started with them, and as it changed them since (kept
        here when the file could not take them)."""
        self._load_themes()

    @property
    def engine(self) -> EngineAPI:
        assert self._engine is not None, "the engine is not open yet"
        return self._engine

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Cockpit's own variables, from the default theme, for any theme that lacks them
        (Textual asks before `__init__` has run, so this reads the bundled file)."""
        return default_variables()

    def open_screen(self, screen: Screen[Any], callback: Any = None) -> None:
        """Open a dialog unless the same one is open already: a key pressed twice in one
        burst (Ctrl+O Ctrl+O, a held F1) opens it once. What its callback raises (the
        engine failing to do what the dialog asked) is reported; the app goes on."""
        if any(same_dialog(screen, opened) for opened in self.screen_stack):
            return
        self.push_screen(screen, None if callback is None else self._reporting(callback))

    def _reporting(self, callback: Callable[[Any], Any]) -> Callable[[Any], Awaitable[None]]:
        async def answered(result: Any) -> None:
            try:
                outcome = callback(result)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as error:
                self.report_failure("do what the dialog asked", error)

        return answered

    def action_command_palette(self) -> None:
        """Ctrl+P: the command palette, unless one is open under another dialog (Textual
        opened a second one there, and died of the duplicate id)."""
        if self.use_command_palette and not any(
            isinstance(screen, CommandPalette) for screen in self.screen_stack
        ):
            self.push_screen(Palette(id="--command-palette"))

    def search_themes(self) -> None:
        """The palette's "Change theme", in Cockpit's palette: Textual's own, an Enter held
        on a theme chose it twice and the second closed the screen under it (the app died,
        seen under the key monkey)."""
        self.push_screen(Palette(providers=[ThemeProvider], placeholder="Search for themes…"))

    # -- themes -------------------------------------------------------------------------------

    def _load_themes(self) -> None:
        """Register the bundled and user themes and choose the saved one; a broken theme or
        settings file is reported once the screen is up, and never stops the app."""
        themes, problems = load_themes(bundled_dir("themes"), self.themes_dir)
        for theme in themes:
            self.register_theme(theme)
        self._settings, broken = self._settings_source.read()
        ToolCard.default_policy = self._settings.tool_cards or TOOL_CARDS_DEFAULT
        self._problems = [*problems, *broken]
        self.ansi_theme_dark, self.ansi_theme_light = ANSI_ON_DARK, ANSI_ON_LIGHT
        self.console.push_theme(CONTENT_STYLES)
        saved, colours = self._settings.theme, self.console.color_system
        self.theme = startup_theme(saved, colours, self.available_themes)

    def watch_theme(self, theme: str) -> None:
        # Textual runs this watcher while `_load_themes` sets the first theme, before the
        # app is mounted: that choice is not the user's, and there is no rail yet.
        if self._settings.theme != theme and widget_is_mounted(self):
            self._settings = replace(self._settings, theme=theme)
            self.save_setting("theme", theme, "the theme choice")
        if widget_is_mounted(self):
            self._restyle_rail()

    # -- settings -----------------------------------------------------------------------------

    def current_settings(self) -> Settings:
        """The settings as `settings.json` says now (read again when it changed), so a
        hand edit counts without a restart; a broken edit is told once and the settings
        read before stay."""
        settings, problems = self._settings_source.read()
        for problem in problems:
            if widget_is_mounted(self):
                self.notify(problem, severity="warning", timeout=10, markup=False)
            else:
                self._problems.append(problem)
        ToolCard.default_policy = settings.tool_cards or TOOL_CARDS_DEFAULT
        return settings

    def save_setting(self, name: str, value: object, what: str) -> None:
        """Save one setting into the file as it is on disk now, every other key left as
        it is there. A file that cannot be read as settings is not overwritten (the
        problem was told once) and the setting stays in memory; a failed write says so."""
        self.current_settings()
        try:
            self._settings_source.save(name, value)
        except ConfigError:
            return
        except OSError as error:
            if widget_is_mounted(self):
                self.notify(f"Could not save {what}: {error}", severity="warning", markup=False)
            else:
                self.log.warning(f"could not save {what}: {error}")

    def _restyle_rail(self) -> None:
        variables = self.get_css_variables()
        rail = self.query_one(SessionRail)
        rail.set_state_colours(
            {state: variables.get(name, "") for state, name in STATE_VARIABLES.items()}
        )
        rail.restyle()

    # -- the session records ------------------------------------------------------------------

    async def _reload_records(self) -> None:
        self.records = {record.id: record for record in await self.engine.sessions()}

    def _ordered(self) -> list[SessionRecord]:
        return sorted(self.records.values(), key=lambda record: (-record.created, record.id))

    async def _fresh(self, session: str) -> SessionRecord | None:
        try:
            record = await self.engine.session(session)
        except KeyError:
            self.records.pop(session, None)
            return None
        self.records[session] = record
        return record

    def _title_of(self, session: str) -> str:
        record = self.records.get(session)
        return session_title(record) if record else session

    def session_choices(self) -> list[tuple[str, str, str]]:
        """(id, title, details) of every session, for the command palette."""
        return [
            (r.id, clean_line(session_title(r)), clean_line(f"{r.agent} · {short_folder(r.cwd)}"))
            for r in self._ordered()
        ]

    def _opened_with(self) -> str | AgentSpec:
        """The agent a new session gets when none is chosen: the one Cockpit was opened
        with, else the default."""
        return self._agent_spec or self.agent or DEFAULT_AGENT

    def _transcript(self) -> TranscriptView | None:
        """The transcript on screen; None once the app is closing (its widgets go while
        messages already posted are still handled)."""
        return self.query_one_optional(TranscriptView)

    def _focus_session(self) -> None:
        """Put the keyboard where the session on screen needs it: on its oldest pending
        request, else on the composer."""
        view = self._transcript()
        if view is None:
            return
        prompts = list(view.prompts.values())
        if prompts:
            prompts[0].focus()
        else:
            self.query_one(Composer).focus()

    def report_failure(self, what: str, error: Exception) -> None:
        """Something the screen asked of the engine or the store failed: the user reads why
        in the session on screen (or in a notice when even that cannot be written), it goes
        to the log with its traceback, and the app goes on."""
        logging.getLogger(__name__).error("could not %s", what, exc_info=error)
        message = f"Cockpit could not {what}: {describe_error(error)}"
        if self._engine is None or not self.is_running:
            return
        self.run_worker(self.engine.report(self.current, message), group="report")
