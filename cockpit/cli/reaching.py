"""Opening the engine a command's arguments reach (the service, or `--local`), saying on
stderr why not when it cannot be reached."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cockpit.api import EngineAPI
from cockpit.cli.arguments import reach_of
from cockpit.client import open_engine


async def reached(args: argparse.Namespace, home: Path) -> EngineAPI | None:
    """The engine `args` reach; None, said on stderr, when it cannot be reached (the
    command then exits with EXIT_SERVICE)."""
    try:
        return await open_engine(home, reach=reach_of(args))
    except ConnectionError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return None
