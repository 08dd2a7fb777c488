"""`cockpit approve`: approve the setup and test commands and the MCP servers of a
repository's `.cockpit.toml` (as committed at the base, in your checkout), so they run in
its sessions. A repository is someone else's code: each is shown whole before it is
approved, and one whose text changes asks again."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI
from cockpit.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.cli.reaching import reached
from cockpit.cli.run import session_folder
from cockpit.cli.service import confirmed
from cockpit.text.sanitize import printable


def add_parser(commands: Any) -> None:
    approve = commands.add_parser(
        "approve",
        help="approve the commands and MCP servers of a repository's .cockpit.toml",
        description="Show the setup and test commands the repository's committed"
        " .cockpit.toml asks worktree sessions to run, and the MCP servers it asks agents"
        " be handed, and approve them: only approved ones run, and one whose text changes"
        " asks again.",
    )
    approve.add_argument("--cwd", help="a folder in the repository (default: here)")
    approve.add_argument("--base", default="HEAD", help="where the file is read (default: HEAD)")
    approve.add_argument("--yes", action="store_true", help="approve without asking")


async def approve_command(args: argparse.Namespace, home: Path) -> int:
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        return await _approve(engine, args)
    finally:
        await engine.close()


async def _approve(engine: EngineAPI, args: argparse.Namespace) -> int:
    try:
        info = await engine.project(session_folder(args.cwd), args.base)
    except ValueError as error:
        print(f"cockpit: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    for problem in info.problems:
        print(f"cockpit: .cockpit.toml: {printable(problem)}", file=sys.stderr)
    asked = info.unapproved
    if not asked:
        has = info.setup or info.test or info.mcp
        print("Everything .cockpit.toml asks is approved." if has else "Nothing to approve.")
        return EXIT_OK
    if not args.yes and not sys.stdin.isatty():
        print("cockpit: nothing was approved: --yes approves without asking.", file=sys.stderr)
        return EXIT_USAGE
    failed = False
    for kind, command in asked:
        what = "MCP server" if kind == "mcp" else f"{kind} command"
        print(f"The {what} of {printable(info.top)}:\n    {printable(command)}")
        if not args.yes and not confirmed(f"Approve this {what}?"):
            print("Not approved.")
            continue
        try:
            await engine.approve_command(info.top, kind, command)
        except OSError as error:
            print(f"cockpit: the approval could not be kept: {error}", file=sys.stderr)
            failed = True
            continue
        print(approved_line(kind, printable(info.top)))
    return EXIT_FAILED if failed else EXIT_OK


def approved_line(kind: str, top: str) -> str:
    """What approving a `kind` of `top` changes, in words."""
    if kind == "mcp":
        return f"Approved: agents of sessions in {top} are handed it as they next start."
    return f"Approved: it runs in new worktree sessions of {top}."
