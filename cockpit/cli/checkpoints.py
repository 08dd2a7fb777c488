"""`cockpit checkpoints SESSION` and `cockpit restore SESSION CHECKPOINT`: a worktree
session's checkpoints, and putting its files back as one holds them (after showing what
that overwrites and deletes, and asking)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.cli.reaching import reached
from cockpit.text.checkpoints import checkpoint_changes, checkpoint_when, plan_lines
from cockpit.text.sanitize import printable
from cockpit.text.textout import age


def add_parsers(commands: Any) -> None:
    listing = commands.add_parser(
        "checkpoints",
        help="list a worktree session's checkpoints (one as each turn starts and ends)",
    )
    listing.add_argument("session", help="a session id, or the start of one")
    listing.add_argument("--json", action="store_true")
    restore = commands.add_parser(
        "restore",
        help="put a worktree session's files back as a checkpoint holds them",
        description=(
            "Show what putting the files back would overwrite and delete, ask, then do it: "
            "only the working files change (never the branch, the index or an ignored "
            "file), and the files as they were are checkpointed first, so restoring that "
            "checkpoint undoes it. Refused while a turn or a command runs in the session."
        ),
    )
    restore.add_argument("session", help="a session id, or the start of one")
    restore.add_argument("checkpoint", help="its number (see `cockpit checkpoints`) or commit")
    restore.add_argument("--yes", action="store_true", help="do not ask")


async def checkpoints_command(args: argparse.Namespace, home: Path) -> int:
    """Run `cockpit checkpoints` or `cockpit restore`."""
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        session = (await engine.find_session(args.session)).id
        if args.command == "checkpoints":
            return await list_checkpoints(engine, session, args.json)
        return await restore(engine, session, args.checkpoint, args.yes)
    except (KeyError, ValueError) as error:
        said = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(printable(f"cockpit: {said}"), file=sys.stderr)
        return EXIT_USAGE
    finally:
        await engine.close()


async def list_checkpoints(engine: EngineAPI, session: str, as_json: bool) -> int:
    checkpoints = await engine.checkpoints(session)
    if as_json:
        print(json.dumps([asdict(checkpoint) for checkpoint in checkpoints], indent=2))
        return EXIT_OK
    if not checkpoints:
        print("No checkpoints: a session in its own worktree gets one as each turn starts.")
        return EXIT_OK
    now = time.time()
    for checkpoint in checkpoints:
        print(
            f"{checkpoint.id:>4}  {checkpoint.commit[:10]}  {age(now - checkpoint.time):>4}  "
            f"{checkpoint_when(checkpoint):<30} {checkpoint_changes(checkpoint)}"
        )
    return EXIT_OK


async def restore(engine: EngineAPI, session: str, checkpoint: str, yes: bool) -> int:
    plan = await engine.restore_preview(session, checkpoint)
    for line in plan_lines(plan, limit=1000):
        print(printable(line))
    if plan.refusal:
        return EXIT_USAGE
    if not yes:
        question = f"Put the files back as checkpoint {plan.checkpoint} holds them? [y/N] "
        try:
            answer = await asyncio.to_thread(input, question)
        except EOFError:  # nothing to read the answer from
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("\nNot restored (answer y, or add --yes).")
            return EXIT_OK
    made = await engine.restore(session, checkpoint)
    print(f"Restored checkpoint {plan.checkpoint}. To undo: cockpit restore {session} {made}")
    return EXIT_OK
