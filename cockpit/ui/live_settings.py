"""The settings while the app runs: as Cockpit started with them and as it changed them
since, read again from `settings.json` when they are used (a hand edit counts without a
restart), and saved one key at a time. The session on screen is saved a little after the
last switch, so walking the rail costs no writes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from textual.app import App
from textual.timer import Timer

from cockpit.compat.textual_private import widget_is_mounted
from cockpit.config_file import ConfigError
from cockpit.ui.settings import Settings, SettingsFile
from cockpit.ui.tool_card import ToolCard

TOOL_CARDS_DEFAULT = ToolCard.default_policy
"""How tool cards open when the settings do not say."""

SESSION_SAVE_DELAY = 2.0
"""Seconds after a switch before the session to reopen on is saved."""


class LiveSettings:
    """The settings the app keeps, the file they come from, and the problems to tell."""

    def __init__(self, app: App[Any], path: Path) -> None:
        self.app = app
        """For notices (once the screen is up) and the save timer."""
        self._source = SettingsFile(path)
        self.kept = Settings()
        """The settings as Cockpit started with them, and as it changed them since (kept
        here when the file could not take them)."""
        self.problems: list[str] = []
        """What was wrong before the screen was up, told once it is."""
        self._session_timer: Timer | None = None

    def load(self, problems: list[str]) -> None:
        """Read the settings as Cockpit starts; `problems` (the themes') are told first."""
        self.kept, broken = self._source.read()
        ToolCard.default_policy = self.kept.tool_cards or TOOL_CARDS_DEFAULT
        self.problems = [*problems, *broken]

    def read(self) -> Settings:
        """The settings as `settings.json` says now (read again when it changed), so a
        hand edit counts without a restart; a broken edit is told once and the settings
        read before stay."""
        settings, problems = self._source.read()
        for problem in problems:
            if widget_is_mounted(self.app):
                self.app.notify(problem, severity="warning", timeout=10, markup=False)
            else:
                self.problems.append(problem)
        ToolCard.default_policy = settings.tool_cards or TOOL_CARDS_DEFAULT
        return settings

    def save(self, name: str, value: object, what: str) -> None:
        """Save one setting into the file as it is on disk now, every other key left as
        it is there. A file that cannot be read as settings is not overwritten (the
        problem was told once) and the setting stays in memory; a failed write says so."""
        self.read()
        try:
            self._source.save(name, value)
        except ConfigError:
            return
        except OSError as error:
            if widget_is_mounted(self.app):
                self.app.notify(f"Could not save {what}: {error}", severity="warning", markup=False)
            else:
                self.app.log.warning(f"could not save {what}: {error}")

    def choose_theme(self, theme: str) -> None:
        """The user chose `theme`: kept, and saved unless it is the one kept already."""
        if self.kept.theme != theme:
            self.kept = replace(self.kept, theme=theme)
            self.save("theme", theme, "the theme choice")

    def remember_session(self, current: str | None) -> None:
        """The session on screen is the one Cockpit opens on next time (saved soon)."""
        if self.kept.last_session != current:
            self.kept = replace(self.kept, last_session=current)
            if self._session_timer is None:
                self._session_timer = self.app.set_timer(SESSION_SAVE_DELAY, self.save_last_session)

    def worktree_default(self, top: str) -> bool:
        """Whether a new session in the repository at `top` is offered a worktree of its
        own (as the user last chose there)."""
        return self.read().worktrees.get(top, False)

    def remember_worktree(self, top: str, wanted: bool) -> None:
        """The user chose (or not) a worktree for a new session in the repository at
        `top`: preselected next time. Only that key of the file changes."""
        choices = dict(self.read().worktrees)
        if choices.get(top) != wanted:
            choices[top] = wanted
            self.kept = replace(self.kept, worktrees=choices)
            self.save("worktrees", choices, "the worktree choice")

    def save_last_session(self) -> None:
        self._session_timer = None
        self.save("last_session", self.kept.last_session, "the session on screen")
