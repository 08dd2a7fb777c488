"""`cockpit inspect SESSION [CALL] [--full] [--json]`: what the built-in Claude agent sent.

For each model call of a session it prints the exact request (system prompt, tools,
messages with their cache breakpoints), the response or the failure, and the usage
(input, cache write, cache read, output tokens). The engine reads them from the agent's
chunk log (`model_calls` of the contract), the request rebuilt by the function the agent
sent it through: what it prints is what was sent. Long strings are cut unless `--full`
is given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from cockpit.api import ModelCall, ModelCalls
from cockpit.client import Reach, open_reader
from cockpit.text.sanitize import printable
from store.requests import breakpoint_paths

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


def call_json(call: ModelCall) -> dict[str, Any]:
    """One call as `--json` prints it."""
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
        "breakpoints": breakpoint_paths(dict(call.request)),
        "request": call.request,
        "response": call.response,
        "error": call.error,
    }


async def read_calls(home: Path, session: str, call: int | None) -> ModelCalls:
    """The session's calls, read by the store's service when one runs, else from the store
    itself: a read starts no service."""
    reader = await open_reader(home, Reach())
    try:
        return await reader.model_calls(session, call)
    finally:
        await reader.close()


async def inspect_command(args: argparse.Namespace, home: Path) -> int:
    """The `cockpit inspect` command."""
    try:
        found = await read_calls(home, args.session, args.call)
    except (KeyError, ValueError) as error:
        print(f"cockpit: {error.args[0] if error.args else error}", file=sys.stderr)
        return EXIT_USAGE
    calls, total = list(found.calls), found.total
    if args.call is not None and not calls:
        print(f"cockpit: there is no call {args.call} (the session made {total})", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        document = {
            "session": found.session,
            "agentSession": found.agent_session,
            "log": found.log,
            "calls": [call_json(call) for call in calls],
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    out = sys.stdout
    sanitize = out.isatty()
    write_header(out, found.session, found.agent_session, Path(found.log), calls, total)
    for call in calls:
        write_call(out, call, total, full=args.full, sanitize=sanitize)
    return EXIT_OK


def usage_line(usage: Mapping[str, int] | None) -> str:
    """`input 12 · cache write 0 · cache read 3,400 · output 80`."""
    if not usage:
        return "no usage reported"
    return " · ".join(f"{label} {usage.get(name, 0):,}" for label, name in USAGE_NAMES)


def cache_share(calls: list[ModelCall]) -> str:
    """The share of input tokens read from the cache, over the given calls."""
    read = sum((call.usage or {}).get("cache_read_input_tokens", 0) for call in calls)
    total = sum(
        (call.usage or {}).get(name, 0)
        for call in calls
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return f"{100 * read / total:.1f}%" if total else "n/a"


def write_header(
    out: TextIO,
    cockpit_id: str | None,
    agent_session: str,
    path: Path,
    calls: list[ModelCall],
    total: int,
) -> None:
    who = f"Session {cockpit_id} (agent session {agent_session})" if cockpit_id else agent_session
    out.write(f"{who}\nlog: {path}\n")
    if not total:
        out.write("No model calls yet.\n")
        return
    summed: dict[str, int] = {}
    for call in calls:
        for name, value in (call.usage or {}).items():
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


def write_call(out: TextIO, call: ModelCall, total: int, *, full: bool, sanitize: bool) -> None:
    took = f" · {call.ended - call.started:.2f} s" if call.ended is not None else ""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(call.started))
    stop = f", stop {call.stop_reason}" if call.stop_reason else ""
    out.write(
        f"\n=== call {call.number} of {total} · turn {call.turn} step {call.step} · "
        f"{call.model} · {when}{took} · {call.status}{stop} ===\n"
    )
    out.write(f"usage: {usage_line(call.usage)}\n")
    out.write(f"breakpoints: {', '.join(breakpoint_paths(dict(call.request))) or 'none'}\n")
    request: dict[str, Any] = dict(call.request)
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
