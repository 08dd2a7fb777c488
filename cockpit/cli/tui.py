"""`cockpit [PATH]`: the TUI, attached to the service of the store the command line names
(started when none runs), or with the engine in its own process (`--local`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cockpit.api import AgentInfo, AgentSpec, EngineAPI
from cockpit.cli import interrupts
from cockpit.cli.arguments import reach_of, resolve_agent
from cockpit.cli.entry import noted
from cockpit.cli.exits import EXIT_CANCELLED, EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.client import agent_named, open_engine

if TYPE_CHECKING:
    from cockpit.ui.app import CockpitApp


def tui_agent(args: argparse.Namespace) -> str | AgentSpec | None:
    """The agent the TUI opens a new session with (None: the newest session reopens): its
    name, which the engine looks up, or how it runs when given as a command (the
    engine's registry, the service's, does not know it; a stored session of it later
    reopens from its own command). ValueError when the command line is wrong."""
    agent = resolve_agent(args)
    if args.agent_cmd:
        return agent
    return agent if args.agent else None


def unknown_agent(chosen: str | AgentSpec | None, agents: Sequence[AgentInfo]) -> str | None:
    """Why the agent named on the command line cannot open a session (the engine that
    runs the agents knows none of that name), or None when it can."""
    if not isinstance(chosen, str):
        return None
    try:
        agent_named(chosen, agents)
    except KeyError as error:
        return str(error.args[0])
    return None


def tui_command(args: argparse.Namespace, home: Path) -> int:
    with noted() as interrupted:  # the TUI loads Textual; the other commands do not
        from cockpit.ui.app import CockpitApp, freeze_startup_objects
    if interrupted:
        return interrupts.say_interrupted()

    folder = Path(args.path).expanduser().resolve()
    if not folder.is_dir():
        print(f"cockpit: {folder} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    try:
        chosen = tui_agent(args)
    except ValueError as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE

    reach = reach_of(args)

    async def engine() -> EngineAPI:
        return await open_engine(home, reach=reach.under_screen())

    async def check_store() -> str | None:
        """Open the engine once before the screen takes over (starting the service when
        none runs; through ssh, logging in, a password asked on the terminal), so that a
        store Cockpit cannot use (SchemaError), a service it cannot reach or an agent it
        does not know is reported on one line rather than inside the TUI."""
        opened = await open_engine(home, reach=reach)
        try:
            return unknown_agent(chosen, opened.agents())
        finally:
            await opened.close()

    try:
        unknown = interrupts.run(check_store())
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_SERVICE
    if unknown is not None:
        print(f"cockpit: {unknown}", file=sys.stderr)
        return EXIT_USAGE
    freeze_startup_objects()
    app = CockpitApp(
        engine,
        folder=folder,
        agent=chosen,
        worktree=args.worktree,
        agents_elsewhere=bool(reach.via),
    )
    if run_screen(app):
        return interrupts.say_interrupted()
    if not reach.local:
        print(
            "Detached: the agents go on in the Cockpit service; `cockpit` attaches again.",
            file=sys.stderr,
        )
    return EXIT_OK


def run_screen(app: CockpitApp) -> bool:
    """Run the app; True when a Ctrl-C (SIGINT) ended it. Until the app has the terminal,
    Ctrl-C is a signal: Textual met it as a KeyboardInterrupt in the middle of its start,
    and left the terminal raw and the process hanging. Here it ends the app as soon as it
    is up, and one sent later (`kill -INT`; a Ctrl-C typed on the screen is a key) ends it
    as a quit does."""
    interrupted: list[int] = []
    ends: list[Callable[[], object]] = []

    def on_interrupt(number: int, _frame: Any) -> None:
        interrupted.append(number)
        for end in ends:
            with contextlib.suppress(RuntimeError):  # the loop has closed: it is ending
                end()

    async def when_up(pilot: Any) -> None:
        loop = asyncio.get_running_loop()
        ends.append(lambda: loop.call_soon_threadsafe(pilot.app.exit, None, EXIT_CANCELLED))
        if interrupted:
            pilot.app.exit(return_code=EXIT_CANCELLED)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        app.run(auto_pilot=when_up)
    finally:
        signal.signal(signal.SIGINT, previous)
    return bool(interrupted)
