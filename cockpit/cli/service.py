"""`cockpit service`: run the store's service in the foreground (for systemd, launchd or
debugging), bridge to it over stdin and stdout (`--stdio`, what `--remote` runs over ssh),
or ask it how it is, stop it or restart it."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from cockpit.cli import interrupts
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE, EXIT_STOPPED, EXIT_STORE, EXIT_USAGE
from cockpit.client import (
    bridge_service,
    counted,
    open_engine,
    run_service,
    service_status,
    start_service,
    stop_service,
)
from cockpit.text.sanitize import printable
from cockpit.text.textout import age


def add_parser(commands: Any) -> None:
    service = commands.add_parser(
        "service",
        help="run the Cockpit service, or ask it: status, stop, restart",
        description=(
            "The service owns the agents and the store of one data folder; the TUI and the "
            "commands attach to it (and start it when none runs), so agents outlive the "
            "terminal. With no action it runs in the foreground."
        ),
    )
    service.add_argument("action", nargs="?", choices=("status", "stop", "restart"))
    service.add_argument(
        "--stdio",
        action="store_true",
        help="speak to the store's service over stdin and stdout (what --remote runs)",
    )
    service.add_argument(
        "--idle",
        type=float,
        metavar="SECONDS",
        help="stop after this long with no client and nothing running (default 900)",
    )
    service.add_argument(
        "--yes", action="store_true", help="stop or restart without asking, even mid-turn"
    )


def service_command(args: argparse.Namespace, home: Path) -> int:
    if args.action is None:
        if args.stdio:
            return bridge_service(home, args.idle)
        return run_service(home, args.idle)
    try:
        return interrupts.run(manage(args, home))
    except ConnectionError as error:  # a service that hangs, or one that went mid-question
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_SERVICE


def describe(status: dict[str, Any]) -> list[str]:
    """What a service runs, in lines."""
    started = float(status.get("started") or time.time())
    lines = [
        f"Cockpit service {status.get('version')} (protocol {status.get('protocol')}), pid "
        f"{status.get('pid')}, up {age(time.time() - started)}, "
        f"{status.get('clients')} client(s) attached",
    ]
    unsaved = counted(status.get("unwritten"))
    if unsaved != (0, 0):
        why = printable(str(status.get("saving_problem") or "writes fail"))
        lines.append(f"  NOT SAVED: {amount(unsaved)}, held in memory ({why})")
    for session in status.get("sessions") or ():
        questions = int(session.get("questions") or 0)
        waiting = f", {questions} question(s) waiting" if questions else ""
        held = counted(session.get("unwritten"))
        waiting += f", {amount(held)} not saved" if held != (0, 0) else ""
        title = printable(str(session.get("title") or "(untitled)"))
        lines.append(f"  {session.get('id')}  {session.get('status'):<10} {title}{waiting}")
    return lines


def amount(lost: tuple[int, int]) -> str:
    """Messages and characters, in words."""
    messages, characters = lost
    return f"{messages} message(s) ({characters:,} characters)"


def busy_line(status: dict[str, Any]) -> str:
    """What stopping would cut short or lose, in words ("" when nothing)."""
    turns, questions = int(status.get("turns") or 0), int(status.get("questions") or 0)
    parts = [f"{turns} turn(s) running"] if turns else []
    parts += [f"{questions} question(s) waiting"] if questions else []
    unsaved = counted(status.get("unwritten"))
    parts += [f"{amount(unsaved)} not saved yet"] if unsaved != (0, 0) else []
    return " and ".join(parts)


def confirmed(question: str) -> bool:
    """Ask on the terminal; no terminal is a no."""
    if not sys.stdin.isatty():
        return False
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


async def manage(args: argparse.Namespace, home: Path) -> int:
    status = await service_status(home)
    if args.action == "status":
        if status is None:
            print(f"No Cockpit service runs for {home}.")
            return EXIT_STOPPED
        print("\n".join(describe(status)))
        return EXIT_OK
    if status is not None and (busy := busy_line(status)) and not args.yes:
        print("\n".join(describe(status)), file=sys.stderr)
        verb = "Stop" if args.action == "stop" else "Restart"
        if not confirmed(f"{busy}: stopping cuts or loses them. {verb} it anyway?"):
            print(f"cockpit: not stopped ({busy}); --yes stops it anyway", file=sys.stderr)
            return EXIT_USAGE
    lost: tuple[int, int] | None = None
    if status is None:
        print(f"No Cockpit service ran for {home}.", file=sys.stderr)
    else:
        lost = await stop_service(home, restart=args.action == "restart")
        print(f"Stopped the Cockpit service (pid {status.get('pid')}).", file=sys.stderr)
        if lost and lost != (0, 0):
            why = printable(str(status.get("saving_problem") or "writes failed"))
            print(
                f"cockpit: {amount(lost)} could not be saved and are lost ({why})",
                file=sys.stderr,
            )
    if args.action == "restart":
        await start_service(home)
        started = await service_status(home)
        print(f"Started the Cockpit service (pid {(started or {}).get('pid')}).", file=sys.stderr)
        await restart_agents(home, running_agents(status))
    return EXIT_STORE if lost and lost != (0, 0) else EXIT_OK


RUNNING = frozenset({"starting", "ready", "working", "waiting", "cancelling"})
"""The states of a session whose agent runs."""


def running_agents(status: dict[str, Any] | None) -> list[str]:
    """The sessions whose agent ran in the service that `status` describes."""
    return [
        str(session.get("id"))
        for session in (status or {}).get("sessions") or ()
        if session.get("status") in RUNNING
    ]


async def restart_agents(home: Path, sessions: list[str]) -> None:
    """Start again, in the new service, the agents that ran in the old one: with this
    command's environment, which is the point of a restart after the user changed theirs
    (a key exported since the service started)."""
    if not sessions:
        return
    try:
        engine = await open_engine(home)
    except ConnectionError as error:
        print(f"cockpit: the agents were not started again: {error}", file=sys.stderr)
        return
    try:
        results = await asyncio.gather(
            *(engine.start(session) for session in sessions), return_exceptions=True
        )
    finally:
        await engine.close()
    failed = sum(isinstance(result, BaseException) for result in results)
    started = len(sessions) - failed
    print(
        f"Started {started} agent(s) again with this command's environment"
        + (f"; {failed} could not start (their sessions say why)." if failed else "."),
        file=sys.stderr,
    )
