"""The agent's modes and config options, from the screen: Shift+Tab steps through the modes,
`/mode NAME` picks one, Ctrl+T lists every option; and the latest plan of a session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from cockpit.api import EngineAPI, PlanEntry, read_plan
from cockpit.text.textout import plan_source
from cockpit.ui.agent_options import (
    OptionChoice,
    mode_option_id,
    model_choices,
    named_choice,
    option_choices,
)
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.failures import reported
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.questions import OptionsScreen
from cockpit.ui.screens.reading import PlanScreen
from cockpit.ui.sessions import Sessions
from store import SessionRecord


class ModesAndOptions:
    """Setting a mode or an option of the session on screen, and showing a plan."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        open_screen: OpenScreen,
        keys: HeldKeys,
    ) -> None:
        self.app = app
        """For notices."""
        self._engine = engine
        self._sessions = sessions
        self._open_screen = open_screen
        self._keys = keys
        """Held while the plan is read: the keys typed after `p` (`e` to edit) go to it."""

    def choices(self, record: SessionRecord) -> list[OptionChoice]:
        """Every mode and option the agent of `record` offers."""
        return option_choices(record)

    @reported("switch the mode")
    async def cycle_mode(self, session: str) -> None:
        """Shift+Tab: the agent's next mode."""
        record = self._sessions.records.get(session)
        if record is None:
            return
        modes = [
            c
            for c in self.choices(record)
            if c.config_id is None or c.config_id == mode_option_id(record)
        ]
        if not modes:
            self.app.notify("This agent has no modes.", timeout=2)
            return
        current = next((i for i, c in enumerate(modes) if c.current), -1)
        await self.apply_choice(record.id, modes[(current + 1) % len(modes)])

    async def set_mode_named(self, session: str, name: str) -> None:
        """`/mode NAME`: the mode whose value or label holds `name` (else list them)."""
        record = self._sessions.records.get(session)
        if record is None:
            return
        modes = [
            c
            for c in self.choices(record)
            if c.config_id is None or c.config_id == mode_option_id(record)
        ]
        wanted = next(
            (c for c in modes if name.lower() in (str(c.value).lower(), c.label.lower())), None
        )
        if wanted is None:
            names = ", ".join(clean_line(c.label) for c in modes) or "none"
            self.app.notify(f"Modes: {names}", timeout=4, markup=False)
            return
        await self.apply_choice(record.id, wanted)

    async def apply_choice(self, session: str, choice: OptionChoice) -> None:
        """Ask the agent for `choice`; a refusal is told."""
        try:
            if choice.config_id is None:
                await self._engine().set_mode(session, str(choice.value))
            else:
                await self._engine().set_config_option(session, choice.config_id, choice.value)
        except Exception as error:
            self.app.notify(
                f"The agent refused: {clean_line(str(error))}", severity="error", markup=False
            )
            return
        self.app.notify(clean_line(choice.label), timeout=2, markup=False)

    async def choose_model(self, session: str, name: str) -> None:
        """`/model`: the model option alone, to pick from; `/model NAME` sets it at once.
        An agent without a model option is told, with where its other options are."""
        record = self._sessions.records.get(session)
        if record is None:
            return
        choices = model_choices(record)
        if not choices:
            self.app.notify(
                "This agent offers no model to choose; Ctrl+T lists what it offers.",
                severity="warning",
                timeout=4,
                markup=False,
            )
            return
        if name:
            wanted = named_choice(choices, name)
            if wanted is None:
                names = ", ".join(clean_line(c.label.partition(": ")[2]) for c in choices)
                self.app.notify(f"No model {name!r}; try: {names}", timeout=4, markup=False)
                return
            await self.apply_choice(record.id, wanted)
            return

        async def chosen(choice: OptionChoice | None) -> None:
            if choice is not None:
                await self.apply_choice(record.id, choice)

        self._open_screen(OptionsScreen(choices, "Model"), chosen)

    def options(self, session: str | None) -> None:
        """Choose any mode or config option the agent of `session` (else the session on
        screen) offers."""
        record = self._sessions.records.get(session or self._sessions.current or "")
        if record is None:
            return

        async def chosen(choice: OptionChoice | None) -> None:
            if choice is not None:
                await self.apply_choice(record.id, choice)

        self._open_screen(OptionsScreen(self.choices(record)), chosen)

    @reported("show the plan")
    async def show_plan(self, session: str | None = None) -> None:
        """The latest plan of a session (the highlighted one in the rail, or this one). The
        keys typed meanwhile are held until its screen is mounted, and go to it."""
        self._keys.hold_keys()
        try:
            session = session or self._sessions.current
            if session is None:
                return
            shown = session
            engine = self._engine()

            async def edited(entries: tuple[PlanEntry, ...] | None) -> None:
                if entries is not None:
                    saved = await engine.update_plan(shown, entries)
                    self.app.notify(f"Plan saved: {plan_source(saved)}.", timeout=3)

            row = await engine.last_row(session, "plan")
            plan = read_plan(row.payload) if row is not None else None
            opened = self._open_screen(PlanScreen(self._sessions.title_of(session), plan), edited)
            if opened is not None:
                await opened  # mounted: the keys held go to it
        finally:
            self._keys.release_keys()
