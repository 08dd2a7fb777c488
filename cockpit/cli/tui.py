"""`cockpit [PATH]`: the TUI, on the engine of the store the command line names."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from cockpit.api import EngineAPI
from cockpit.cli.connect import Registry, load_registry, open_engine, resolve_agent
from cockpit.cli.exits import EXIT_OK, EXIT_USAGE


def tui_agent(args: argparse.Namespace, registry: Registry) -> str | None:
    """The name of the agent the TUI opens a new session with (None: the newest session
    reopens). An agent given as a command joins `registry` for this run, so the first
    session, the dialog and the palette can use it; a stored session of it later reopens
    from its own command. KeyError or ValueError when the command line names no agent."""
    spec = resolve_agent(args, registry)
    registry.agents[spec.name] = spec
    return spec.name if args.agent or args.agent_cmd else None


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

    async def engine() -> EngineAPI:
        return await open_engine(home, registry=registry)

    async def check_store() -> None:
        """Open the store once before the screen takes over, so that a store Cockpit
        cannot use (SchemaError) is reported on one line rather than inside the TUI."""
        await (await engine()).close()

    asyncio.run(check_store())
    freeze_startup_objects()
    CockpitApp(engine, folder=folder, agent=chosen).run()
    return EXIT_OK
