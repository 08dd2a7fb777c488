"""The user's own commands (`!command`) as this screen follows them: which run in each
session (so Esc and Ctrl+C know at once, from the keyboard, whether they kill a command
first), which this screen started, and the chip each of those leaves once it ends.

A command runs in the engine: `run_shell` stores its row and answers with the row's key,
then the row's frames say how it goes. Both may come in either order, and a key typed
before the engine answered (Esc right after Enter, in one burst) must still kill it: a
stop asked while a command is starting is kept, and done as soon as the engine answers.
Frames of every session reach `follow`; attached to the service, a screen gets the frames
of the session it shows, so it also watches the sessions where its commands run."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from textual.app import App

from cockpit.api import EngineAPI, ShellRun, read_shell_run
from cockpit.ui.failures import reported
from cockpit.ui.shell_chips import Chip, ChipShelf
from cockpit.ui.shell_rules import output_lines
from store import Bubble, Frame

SHELL = "shell"
"""The kind of a command's row."""

ENDED_KEPT = 64
"""Runs seen ending that this screen may yet hear it started (the engine's answer can come
after the run's last frame): the newest kept."""


class ShellRuns:
    """The commands running in each session, the ones this screen started, and the chips
    their output leaves (`shelf`)."""

    def __init__(self, app: App[Any], engine: Callable[[], EngineAPI], shelf: ChipShelf) -> None:
        self.app = app
        """For workers and reporting failures."""
        self._engine = engine
        self.shelf = shelf
        """Where the output of a command this screen started goes once it ends."""
        self._running: dict[str, set[str]] = {}
        """The rows of the commands running in each session, as their frames say."""
        self._starting: dict[str, int] = {}
        """Commands asked of the engine in each session that it has not answered yet."""
        self._stop_wanted: set[str] = set()
        """Sessions where Esc or Ctrl+C came while a command was starting."""
        self._mine: dict[str, str] = {}
        """The rows of the commands this screen started and that still run, and their
        sessions."""
        self._ended: OrderedDict[str, Chip] = OrderedDict()
        """Runs seen ending, by row, with the chip each would leave."""
        self._reading: dict[str, set[str]] = {}
        """The rows of the runs in each session that read what the user sends (a login)."""

    def busy(self, session: str | None) -> bool:
        """True while a command runs in `session`, or one asked for is starting."""
        if session is None:
            return False
        return bool(self._running.get(session)) or self._starting.get(session, 0) > 0

    def reads_input(self, session: str | None) -> bool:
        """True while a run in `session` reads the lines the user sends (an agent's login
        waiting for a code): Enter sends the prompt's text to it."""
        return session is not None and bool(self._reading.get(session))

    # -- running and stopping -----------------------------------------------------------------

    def run(self, session: str, command: str) -> None:
        """Run `command` in `session` as the user, beside the screen (a stop asked from
        now on reaches it, even before the engine has answered)."""
        self._starting[session] = self._starting.get(session, 0) + 1
        work: Callable[[], object] = partial(self._run, session, command)
        self.app.run_worker(work, group="shell", exit_on_error=False)

    async def _run(self, session: str, command: str) -> None:
        try:
            key = await self._started(session, command)
        finally:
            self._starting[session] -= 1
            if not self._starting[session]:
                del self._starting[session]
        if key is not None:
            ended = self._ended.pop(key, None)
            if ended is not None:  # it ended before the engine answered
                self.shelf.add(session, ended)
            else:
                self._mine[key] = session
                self._running.setdefault(session, set()).add(key)
                self._watch()
        if session in self._stop_wanted:
            if not self._starting.get(session):
                self._stop_wanted.discard(session)
            if key is not None and key in self._mine:
                await self._stop(session)

    @reported("run that command")
    async def _started(self, session: str, command: str) -> str | None:
        return await self._engine().run_shell(session, command)

    async def stop(self, session: str) -> bool:
        """Kill the commands running in `session`, and the ones starting there as soon as
        the engine has answered. False when none runs after all (the frames that said it
        ended had not come yet): the key does what it does without one."""
        if self._starting.get(session):
            self._stop_wanted.add(session)
            if not self._running.get(session):
                return True
        return await self._stop(session)

    @reported("stop the command", default=False)
    async def _stop(self, session: str) -> bool:
        stopped = await self._engine().stop_shell(session)
        if not stopped:
            self._running.pop(session, None)  # they ended: their last frames are on the way
        return stopped

    # -- following their rows -----------------------------------------------------------------

    def follow(self, session: str, frames: Iterable[Frame]) -> None:
        """What a session's frames say of its commands: started, or ended (leaving a chip
        when this screen started it)."""
        for frame in frames:
            if frame.kind == SHELL:
                self._seen(session, frame.key, frame.payload, frame.part)

    def read(self, session: str, bubbles: Iterable[Bubble]) -> None:
        """What a session's transcript, read afresh, says of its commands (frames missed
        while it was not watched: a link cut, another screen's command)."""
        rows = [bubble for bubble in bubbles if bubble.kind == SHELL]
        running = {row.key for row in rows if self._read_running(row)}
        self._reading[session] = {row.key for row in rows if self._reads(row.payload)}
        mine = {key for key, owner in self._mine.items() if owner == session}
        self._running[session] = running | (mine - {row.key for row in rows})
        for row in rows:
            if row.key in self._mine:
                self._seen(session, row.key, row.payload, row.text)

    @staticmethod
    def _read_running(bubble: Bubble) -> bool:
        run = read_shell_run(bubble.payload)
        return isinstance(run, ShellRun) and run.running

    @staticmethod
    def _reads(payload: object) -> bool:
        run = read_shell_run(payload)
        return isinstance(run, ShellRun) and run.takes_input

    def _seen(self, session: str, key: str, payload: object, output: str) -> None:
        run = read_shell_run(payload)
        if not isinstance(run, ShellRun):
            return
        if run.running:
            self._running.setdefault(session, set()).add(key)
            if run.takes_input:
                self._reading.setdefault(session, set()).add(key)
            return
        self._running.get(session, set()).discard(key)
        self._reading.get(session, set()).discard(key)
        chip = Chip(key, run.command, output_lines(output))
        if self._mine.pop(key, None) is not None:
            self.shelf.add(session, chip)
            self._watch()
        else:  # another screen's, or this one's before the engine answered
            self._ended[key] = chip
            while len(self._ended) > ENDED_KEPT:
                self._ended.popitem(last=False)

    def _watch(self) -> None:
        """Ask for the frames of the sessions where this screen's commands run (the one
        on screen comes anyway), so that each one's end is heard."""
        self._engine().watch(set(self._mine.values()))
