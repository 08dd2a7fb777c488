"""`cockpit [PATH]`: the TUI, attached to the service of the store the command line names
(started when none runs), or with the engine in its own process (`--local`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from cockpit.api import AgentSpec, EngineAPI
from cockpit.cli.connect import Reach, Registry, load_registry, open_engine, resolve_agent
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE, EXIT_USAGE


def tui_agent(args: argparse.Namespace, registry: Registry) -> str | AgentSpec | None:
    """The agent the TUI opens a new session with (None: the newest session reopens): its
    name, or how it runs when given as a command (the engine's registry, the service's,
    may not know it). In this process an agent given as a command also joins `registry`,
    so the dialog and the palette can use it; a stored session of it later reopens from
    its own command. KeyError or ValueError when the command line names no agent."""
    spec = resolve_agent(args, registry)
    registry.agents[spec.name] = spec
    if args.agent_cmd:
        return spec
    return spec.name if args.agent else None


def tui_command(args: argparse.Namespace, home: Path) -> int:
    # the TUI loads Textual; the other commands do not
    from cockpit.ui.app import CockpitApp, freeze_startup_objects

    folder = Path(args.path).expanduser().resolve()
    if not folder.is_dir():
        print(f"cockpit: {folder} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    registry = load_registry()
    try:
        chosen = tui_agent(args, registry)
    except (KeyError, ValueError) as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE

    reach = Reach.of(args)

    async def engine() -> EngineAPI:
        return await open_engine(home, reach=reach.under_screen(), registry=registry)

    async def check_store() -> None:
        """Open the engine once before the screen takes over (starting the service when
        none runs; through ssh, logging in, a password asked on the terminal), so that a
        store Cockpit cannot use (SchemaError) or a service it cannot reach is reported on
        one line rather than inside the TUI."""
        await (await open_engine(home, reach=reach, registry=registry)).close()

    try:
        asyncio.run(check_store())
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_SERVICE
    freeze_startup_objects()
    CockpitApp(engine, folder=folder, agent=chosen).run()
    if not reach.local:
        print(
            "Detached: the agents go on in the Cockpit service; `cockpit` attaches again.",
            file=sys.stderr,
        )
    return EXIT_OK
