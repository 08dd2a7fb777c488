"""Races from the screen: `/race AGENTS PROMPT` sends the prompt to each agent (commas
between them; a name may come again), each in a worktree of its own from the repository
the session on screen works in, and opens the comparison; `/race` alone opens the race of
the session on screen. From the comparison, a contender is shown or kept (after asking)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from cockpit.api import EngineAPI, SessionRecord, read_race, read_worktree
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.failures import reported_to
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.screens.race import RaceScreen
from cockpit.ui.sessions import Sessions

USAGE = "/race AGENTS PROMPT: agents by name with commas (demo,demo), then the prompt."


def race_arguments(arguments: str) -> tuple[list[str], str] | None:
    """(agents, prompt) of `/race a,b prompt...` (None: not both given)."""
    first, _, prompt = arguments.strip().partition(" ")
    agents = [name.strip() for name in first.split(",") if name.strip()]
    return (agents, prompt.strip()) if agents and prompt.strip() else None


def race_folder(record: SessionRecord) -> str:
    """Where a race started from a session begins: the checkout its worktree came from,
    else its own folder."""
    made = read_worktree(record.info)
    return made.repo if made is not None else record.cwd


class Races:
    """Start a race, show its comparison, keep a contender."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        open_screen: OpenScreen,
        select: Callable[[str], None],
    ) -> None:
        self.app = app
        self._engine = engine
        self._sessions = sessions
        self._open_screen = open_screen
        self._select = select

    async def race(self, session: str, arguments: str) -> None:
        """`/race`: start one (with arguments) or show the session's."""
        record = self._sessions.records.get(session)
        if record is None:
            return
        if not arguments.strip():
            entry = read_race(record.info)
            if entry is None:
                self.app.notify(f"This session is in no race. {USAGE}", timeout=6, markup=False)
                return
            self.show(entry.id, entry.prompt)
            return
        asked = race_arguments(arguments)
        if asked is None:
            self.app.notify(USAGE, severity="warning", timeout=6, markup=False)
            return
        agents, prompt = asked
        folder = race_folder(record)
        try:
            info = await self._engine().project(folder)
        except ValueError as error:  # in no repository: said before anything is made
            self.app.notify(str(error), severity="error", markup=False)
            return
        waiting = info.unapproved
        if not waiting:
            await self._start(agents, folder, prompt)
            return

        @reported_to(self.app, "start the race")
        async def answered(approve: bool | None) -> None:
            if approve is None:
                return  # Esc: no race
            if approve:
                for kind, command in waiting:
                    await self._engine().approve_command(info.top, kind, command)
            await self._start(agents, folder, prompt)

        question = ConfirmScreen(
            f"{info.top} asks, in its .cockpit.toml, to run these in each contender's worktree."
            " Run them?",
            yes="Approve and race",
            no="Race without them",
            details=[f"{kind}: $ {command}" for kind, command in waiting],
        )
        self._open_screen(question, answered)

    async def _start(self, agents: list[str], folder: str, prompt: str) -> None:
        try:
            made = await self._engine().race(agents, folder, prompt)
        except KeyError as error:
            self.app.notify(str(error.args[0]), severity="error", markup=False)
            return
        except ValueError as error:
            self.app.notify(str(error), severity="error", markup=False)
            return
        entry = read_race(made[0].info)
        if entry is not None:
            self.show(entry.id, prompt)

    def show(self, race_id: str, prompt: str) -> None:
        """The comparison of race `race_id`."""
        engine = self._engine()

        @reported_to(self.app, "keep the contender")
        async def answered(choice: tuple[str, str] | None) -> None:
            if choice is None:
                return
            what, session = choice
            if what == "show":
                self._select(session)
            else:
                self._ask_keep(session)

        self._open_screen(RaceScreen(prompt, lambda: engine.race_standings(race_id)), answered)

    def _ask_keep(self, session: str) -> None:
        @reported_to(self.app, "keep the contender")
        async def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                said = await self._engine().keep_contender(session)
            except ValueError as error:
                self.app.notify(clean_line(str(error)), severity="error", markup=False)
                return
            self.app.notify(clean_line(" ".join(said)), timeout=10, markup=False)

        question = (
            f"Keep {session}? Its work is committed and merged into your checkout, and the"
            " other contenders are archived (their branches stay)."
        )
        self._open_screen(ConfirmScreen(question, yes="Keep", no="Not yet"), confirmed)
