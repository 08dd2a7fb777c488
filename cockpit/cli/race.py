"""`cockpit race --agents a,b,c PROMPT`: one prompt to several agents (or one agent several
times), each in a worktree of its own, headless. It waits for every turn and the
repository's approved test in each worktree, prints the comparison (or `--json`), and
merges nothing unless `--keep` names the contender to keep: that one is committed and
merged into your checkout, the others archived."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.api import Contender, EngineAPI, SessionRecord, Status, read_race
from cockpit.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.cli.reaching import reached
from cockpit.cli.run import allowed_kinds, session_folder
from cockpit.text.sanitize import printable

POLL = 0.3
"""Seconds between looks at the standings while the contenders work."""
BUSY = frozenset({Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING})
UNSETTLED = frozenset({"waiting", "running"})


def add_parser(commands: Any) -> None:
    race = commands.add_parser(
        "race",
        help="send one prompt to several agents, each in its own worktree, and compare",
        description="Send PROMPT to each agent of --agents (a name may come again), each in"
        " a worktree of its own from --base, wait for every turn and for the repository's"
        " approved test command in each worktree, and print the comparison. Nothing is"
        " merged unless --keep names the contender to keep (its number, or its agent when"
        " only one has it): it is committed and merged into your checkout, the others are"
        " archived.",
    )
    race.add_argument("prompt", help="what every contender is asked")
    race.add_argument("--agents", required=True, help="agents by name, with commas: a,b,c")
    race.add_argument("--cwd", help="a folder in the repository (default: here)")
    race.add_argument("--base", default="HEAD", help="what the worktrees start from")
    race.add_argument("--keep", metavar="N|AGENT", help="keep this contender: merge it")
    race.add_argument("--json", action="store_true", help="the comparison as JSON")
    allow = race.add_mutually_exclusive_group()
    allow.add_argument("--yes", action="store_true", help="allow every permission request")
    allow.add_argument("--allow", metavar="KINDS", help="allow these tool kinds, e.g. read,edit")


def agent_names(text: str) -> list[str]:
    """The agents `--agents` lists, in order (a name may come again)."""
    return [name.strip() for name in text.split(",") if name.strip()]


def chosen(standings: Sequence[Contender], keep: str) -> Contender | None:
    """The contender `--keep` names: its number (from 1), or an agent only one has."""
    if keep.isdigit():
        number = int(keep)
        return standings[number - 1] if 1 <= number <= len(standings) else None
    matching = [c for c in standings if c.agent == keep]
    return matching[0] if len(matching) == 1 else None


def amount(contender: Contender) -> str:
    """Its tokens and cost, as far as its agent reported them."""
    parts = []
    if contender.tokens is not None:
        parts.append(f"{contender.tokens:,.0f} tok")
    if contender.cost is not None:
        parts.append(f"{contender.cost:.2f} {contender.currency}")
    return " ".join(parts) or "-"


def table(standings: Sequence[Contender]) -> list[str]:
    """The comparison, a line per contender under a heading."""
    rows = [("#", "agent", "session", "status", "files", "lines", "test", "time", "cost")]
    for number, c in enumerate(standings, 1):
        time = f"{c.seconds:.0f}s" if c.seconds is not None else "-"
        status = c.worktree or str(c.status)
        lines = f"+{c.added} -{c.removed}"
        rows.append(
            (str(number), c.agent, c.session, status, str(c.files), lines, c.test, time, amount(c))
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        printable("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        for row in rows
    ]


def progress_line(contender: Contender) -> str:
    """A contender done, as the race says it while the others go on."""
    files = "file" if contender.files == 1 else "files"
    took = f" in {contender.seconds:.0f}s" if contender.seconds is not None else ""
    return printable(
        f"{contender.agent} ({contender.session}) is done{took}: {contender.files} {files}"
        f" +{contender.added} -{contender.removed}, test {contender.test}"
    )


def settled(standings: Sequence[Contender]) -> bool:
    """True once every contender's turn and test have ended (its time is known only then:
    before its turn begins it is not busy either)."""
    return all(
        c.seconds is not None and c.status not in BUSY and c.test not in UNSETTLED
        for c in standings
    )


async def race_command(args: argparse.Namespace, home: Path) -> int:
    agents = agent_names(args.agents)
    if not agents:
        print("cockpit: --agents names no agent", file=sys.stderr)
        return EXIT_USAGE
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        return await _race(engine, agents, args)
    finally:
        await engine.close()


async def _race(engine: EngineAPI, agents: list[str], args: argparse.Namespace) -> int:
    allowed = allowed_kinds(args.yes, args.allow)
    try:
        made = await engine.race(agents, session_folder(args.cwd), args.prompt, args.base, allowed)
    except KeyError as error:
        print(f"cockpit: {printable(str(error.args[0]))}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as error:
        print(f"cockpit: {printable(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    for record in made:
        print(f"cockpit: {record.agent} races in session {record.id}", file=sys.stderr)
    standings = await _wait(engine, made)
    if args.json:
        print(json.dumps([asdict(c) for c in standings], indent=2))
    else:
        print("\n".join(table(standings)))
    if args.keep is None:
        return EXIT_OK
    return await _keep(engine, standings, args.keep)


async def _wait(engine: EngineAPI, made: list[SessionRecord]) -> list[Contender]:
    """The standings once every contender is done; Ctrl+C cancels their turns."""
    entry = read_race(made[0].info)
    race_id = entry.id if entry is not None else ""
    loop = asyncio.get_running_loop()
    cancels: set[asyncio.Future[bool]] = set()

    def cancel() -> None:
        for record in made:
            task = asyncio.ensure_future(engine.cancel(record.id))
            cancels.add(task)  # kept until it is done
            task.add_done_callback(cancels.discard)

    with contextlib.suppress(NotImplementedError):
        loop.add_signal_handler(signal.SIGINT, cancel)
    told: set[str] = set()
    try:
        while True:
            standings = await engine.race_standings(race_id)
            for contender in standings:  # each one's end, as it comes: a race takes minutes
                if contender.session not in told and settled([contender]):
                    told.add(contender.session)
                    print(f"cockpit: {progress_line(contender)}", file=sys.stderr)
            if len(standings) == len(made) and settled(standings):
                return standings
            await asyncio.sleep(POLL)
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)


async def _keep(engine: EngineAPI, standings: list[Contender], keep: str) -> int:
    """Merge the contender kept; the others are archived once it is in."""
    kept = chosen(standings, keep)
    if kept is None:
        print(f"cockpit: --keep {printable(keep)} names no one contender", file=sys.stderr)
        return EXIT_USAGE
    try:
        said = await engine.keep_contender(kept.session)
    except ValueError as error:
        print(f"cockpit: {printable(str(error))}", file=sys.stderr)
        return EXIT_FAILED
    for line in said:
        print(printable(line))
    return EXIT_OK
