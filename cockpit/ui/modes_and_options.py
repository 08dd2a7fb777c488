"""The agent's modes and config options, from the screen: Shift+Tab steps through the modes,
`/mode NAME` picks one, Ctrl+T lists every option; and the latest plan of a session."""

from __future__ import annotations

from cockpit.text.textout import plan_lines
from cockpit.ui.agent_options import OptionChoice, mode_option_id, option_choices
from cockpit.ui.base import CockpitBase
from cockpit.ui.composer import Composer
from cockpit.ui.failures import reported
from cockpit.ui.one_line import clean_line
from cockpit.ui.rail import SessionRail
from cockpit.ui.screens.questions import OptionsScreen
from cockpit.ui.screens.reading import PlanScreen
from store import SessionRecord


class ModesAndOptions(CockpitBase):
    """Setting a mode or an option of the session on screen, and showing a plan."""

    def _choices(self, record: SessionRecord) -> list[OptionChoice]:
        return option_choices(record)

    def on_composer_cycle_mode(self, message: Composer.CycleMode) -> None:
        self.run_worker(self._cycle_mode(message.session), group="mode", exit_on_error=False)

    @reported("switch the mode")
    async def _cycle_mode(self, session: str) -> None:
        """Shift+Tab: the agent's next mode."""
        record = self.records.get(session)
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
        await self._apply_choice(record.id, modes[(current + 1) % len(modes)])

    async def _set_mode_named(self, session: str, name: str) -> None:
        record = self.records.get(session)
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
        await self._apply_choice(record.id, wanted)

    async def _apply_choice(self, session: str, choice: OptionChoice) -> None:
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

    def action_options(self, session: str | None = None) -> None:
        """Choose any mode or config option the agent of `session` (else the session on
        screen) offers."""
        record = self.records.get(session or self.current or "")
        if record is None:
            return

        async def chosen(choice: OptionChoice | None) -> None:
            if choice is not None:
                await self._apply_choice(record.id, choice)

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
