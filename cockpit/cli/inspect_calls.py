"""`cockpit inspect SESSION [CALL] [--full] [--json]`: what the built-in Claude agent sent.

For each model call of a session it prints the exact request (system prompt, tools,
messages with their cache breakpoints), the response or the failure, and the usage
(input, cache write, cache read, output tokens). The request is rebuilt from the agent's
chunk log by `store.requests.compose_request`, the same function the agent sent it
through, from the log position and settings the agent recorded for that call: what it
prints is what was sent. Long strings are cut unless `--full` is given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from cockpit.client import Reach, open_reader
from cockpit.text.sanitize import printable
from store.chunk_log import CallRecord, ChunkLog, ChunkLogError, log_path
from store.entries import Entry
from store.requests import breakpoint_paths, compose_request

EXIT_OK, EXIT_USAGE = 0, 2
SHORT = 240
"""Characters of a string shown without --full."""
USAGE_NAMES = (
    ("input", "input_tokens"),
    ("cache write", "cache_creation_input_tokens"),
    ("cache read", "cache_read_input_tokens"),
    ("output", "output_tokens"),
)


def add_parser(commands: Any) -> None:
    """Add the `inspect` subcommand to the command line's subparsers."""
    inspect = commands.add_parser(
        "inspect",
        help="print each model call the built-in Claude agent made: request, response, usage",
    )
    inspect.add_argument("session", help="a session id (or the start of one)")
    inspect.add_argument("call", nargs="?", type=int, help="only this call (1, 2, ...)")
    inspect.add_argument("--full", action="store_true", help="do not cut long strings")
    inspect.add_argument("--json", action="store_true", help="print one JSON object")


@dataclass(frozen=True)
class Inspected:
    """One call, with the request rebuilt from the log."""

    call: CallRecord
    request: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        call = self.call
        return {
            "number": call.number,
            "turn": call.turn,
            "step": call.step,
            "upto": call.upto,
            "status": call.status,
            "stopReason": call.stop_reason,
            "started": call.started,
            "ended": call.ended,
            "usage": dict(call.usage or {}),
            "breakpoints": breakpoint_paths(self.request),
            "request": self.request,
            "response": call.response,
            "error": call.error,
        }


async def load_calls(log: ChunkLog, only: int | None = None) -> list[Inspected]:
    """Every call of a log (or call `only`), each request rebuilt by compose_request."""
    entries = await log.entries()
    inspected: list[Inspected] = []
    for call in await log.calls():
        if only is not None and call.number != only:
            continue
        upto: list[Entry] = [entry for entry in entries if entry.seq <= call.upto]
        inspected.append(Inspected(call, compose_request(upto, await log.spec_of(call))))
    return inspected


async def find_log(home: Path, wanted: str) -> tuple[str | None, str, Path] | str:
    """(Cockpit session id, agent session id, log file) for SESSION, or an error message.
    SESSION is a Cockpit session (or the start of its id), or the agent's own session id."""
    engine = await open_reader(home, Reach())  # a read: starts no service
    try:
        try:
            record = await engine.find_session(wanted)
        except KeyError as error:
            record, problem = None, str(error.args[0])
    finally:
        await engine.close()
    if record is not None:
        agent_session = record.agent_session_id
        if not agent_session:
            return f"session {record.id} has not started an agent session yet"
        path = _path(home, agent_session)
        if path is None or not path.is_file():
            return (
                f"session {record.id} ({record.agent}) has no chunk log: only sessions of the "
                "built-in Claude agent (`--agent claude`) can be inspected"
            )
        return record.id, agent_session, path
    path = _path(home, wanted)
    if path is not None and path.is_file():
        return None, wanted, path
    return problem


def _path(home: Path, session_id: str) -> Path | None:
    try:
        return log_path(home, session_id)
    except ValueError:
        return None


async def inspect_command(args: argparse.Namespace, home: Path) -> int:
    """The `cockpit inspect` command."""
    found = await find_log(home, args.session)
    if isinstance(found, str):
        print(f"cockpit: {found}", file=sys.stderr)
        return EXIT_USAGE
    cockpit_id, agent_session, path = found
    try:
        log = await ChunkLog.open(path, create=False)
    except ChunkLogError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_USAGE
    try:
        total = len(await log.calls())
        calls = await load_calls(log, args.call)
    finally:
        await log.close()
    if args.call is not None and not calls:
        print(f"cockpit: there is no call {args.call} (the session made {total})", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        document = {
            "session": cockpit_id,
            "agentSession": agent_session,
            "log": str(path),
            "calls": [item.as_json() for item in calls],
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    out = sys.stdout
    sanitize = out.isatty()
    write_header(out, cockpit_id, agent_session, path, calls, total)
    for item in calls:
        write_call(out, item, total, full=args.full, sanitize=sanitize)
    return EXIT_OK


def usage_line(usage: Mapping[str, int] | None) -> str:
    """`input 12 · cache write 0 · cache read 3,400 · output 80`."""
    if not usage:
        return "no usage reported"
    return " · ".join(f"{label} {usage.get(name, 0):,}" for label, name in USAGE_NAMES)


def cache_share(calls: list[Inspected]) -> str:
    """The share of input tokens read from the cache, over the given calls."""
    read = sum((item.call.usage or {}).get("cache_read_input_tokens", 0) for item in calls)
    total = sum(
        (item.call.usage or {}).get(name, 0)
        for item in calls
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return f"{100 * read / total:.1f}%" if total else "n/a"


def write_header(
    out: TextIO,
    cockpit_id: str | None,
    agent_session: str,
    path: Path,
    calls: list[Inspected],
    total: int,
) -> None:
    who = f"Session {cockpit_id} (agent session {agent_session})" if cockpit_id else agent_session
    out.write(f"{who}\nlog: {path}\n")
    if not total:
        out.write("No model calls yet.\n")
        return
    summed: dict[str, int] = {}
    for item in calls:
        for name, value in (item.call.usage or {}).items():
            summed[name] = summed.get(name, 0) + value
    shown = f"{len(calls)} of {total}" if len(calls) != total else str(total)
    out.write(f"model calls: {shown} · {usage_line(summed)} · cache share {cache_share(calls)}\n")


def shortened(value: Any, limit: int = SHORT) -> Any:
    """A copy with every string longer than `limit` cut, saying how much was left out."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"…[+{len(value) - limit} chars; --full shows all]"
    if isinstance(value, Mapping):
        return {key: shortened(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [shortened(item, limit) for item in value]
    return value


def write_call(out: TextIO, item: Inspected, total: int, *, full: bool, sanitize: bool) -> None:
    call = item.call
    took = f" · {call.ended - call.started:.2f} s" if call.ended is not None else ""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(call.started))
    stop = f", stop {call.stop_reason}" if call.stop_reason else ""
    out.write(
        f"\n=== call {call.number} of {total} · turn {call.turn} step {call.step} · "
        f"{call.model} · {when}{took} · {call.status}{stop} ===\n"
    )
    out.write(f"usage: {usage_line(call.usage)}\n")
    out.write(f"breakpoints: {', '.join(breakpoint_paths(item.request)) or 'none'}\n")
    request: dict[str, Any] = item.request
    if not full:
        names = [str(tool.get("name")) for tool in request.get("tools") or ()]
        out.write(f"tools: {', '.join(names) or 'none'} (--full shows their definitions)\n")
        request = {key: value for key, value in request.items() if key != "tools"}
        request = shortened(request)
    text = "request:\n" + json.dumps(request, indent=2, ensure_ascii=False) + "\n"
    if call.error:
        text += f"failure: {call.error}\n"
    if call.response is not None:
        response = call.response if full else shortened(call.response)
        text += "response:\n" + json.dumps(response, indent=2, ensure_ascii=False) + "\n"
    out.write(printable(text) if sanitize else text)
