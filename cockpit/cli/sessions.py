"""`cockpit ls` and `cockpit show`: the stored sessions and their transcripts, as the
service says when one runs, else read from the store itself without writing to it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypeVar

from cockpit.api import ReaderAPI, Row, SessionRecord, Status, is_run
from cockpit.cli.arguments import reach_of
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.client import read_store
from cockpit.text.sanitize import printable
from cockpit.text.textout import RUN_MARK, age, transcript_markdown, transcript_text

T = TypeVar("T")

FAILED = frozenset({Status.EXITED, Status.ERROR})
"""How a session's agent ended when it failed: what `ls` keeps from the store."""


def live_status(engine: ReaderAPI, record: SessionRecord, elsewhere: Collection[str]) -> str:
    """What a session does now: as the engine says, or as the Cockpit that runs it with
    --local stored it (its id in `elsewhere`). A stored "working" of a Cockpit that died
    mid-turn is stale: of a session no agent runs, only how its agent failed carries over
    from the store."""
    status = engine.status(record.id)
    if status != Status.CLOSED:
        return status
    if record.status in FAILED or record.id in elsewhere:
        return record.status
    return Status.CLOSED


async def run_elsewhere(engine: ReaderAPI, records: Iterable[SessionRecord]) -> set[str]:
    """The sessions among `records` that another Cockpit process runs now."""
    return set(await engine.running_elsewhere([record.id for record in records]))


async def read(
    args: argparse.Namespace, home: Path, work: Callable[[ReaderAPI], Awaitable[T]]
) -> T | int:
    """`work` done with what reads the store (`read_store`), or EXIT_SERVICE, said on
    stderr, when the service `--remote` or `--via` names cannot be reached (a store that
    cannot be read is `main`'s to say)."""
    try:
        return await read_store(home, reach_of(args), work)
    except ConnectionError as error:
        print(f"cockpit: {error or 'the Cockpit service could not be reached'}", file=sys.stderr)
        return EXIT_SERVICE


async def listing(engine: ReaderAPI) -> list[SessionRecord]:
    """Every stored session, each with what it does now."""
    sessions = await engine.sessions()
    elsewhere = await run_elsewhere(engine, sessions)
    return [replace(s, status=live_status(engine, s, elsewhere)) for s in sessions]


async def ls_command(args: argparse.Namespace, home: Path) -> int:
    sessions = await read(args, home, listing)
    if isinstance(sessions, int):
        return sessions
    if args.json:
        print(json.dumps([_session_json(s) for s in sessions], indent=2))
        return EXIT_OK
    if not sessions:
        print('No sessions yet. Start one with: cockpit run "your prompt"')
        return EXIT_OK
    now = time.time()
    if sys.stdout.isatty():  # a script reading the lines gets the sessions only
        print(header_line(sessions))
    for record in sessions:
        print(session_line(record, now))
    return EXIT_OK


def header_line(sessions: Iterable[SessionRecord]) -> str:
    """The names of the columns of `session_line`, over them."""
    width = max((len(record.id) for record in sessions), default=0)
    return _columns("ID".ljust(width), "STATUS", "AGENT", "AGE", "", "TITLE", "[FOLDER]")


def session_line(record: SessionRecord, now: float) -> str:
    """One session as `ls` lists it: id, status, agent, age, `run` for a session that
    `cockpit run` made (blank otherwise, so the titles line up), title and folder."""
    title = printable(record.title or "(untitled)")
    mark = RUN_MARK if is_run(record) else ""
    when = age(now - record.updated)
    return _columns(record.id, record.status, record.agent, when, mark, title, f"[{record.cwd}]")


def _columns(
    ident: str, status: str, agent: str, when: str, mark: str, title: str, folder: str
) -> str:
    """A line of `ls`, its columns lined up (the header's too)."""
    return f"{ident}  {status:<8} {agent:<12} {when:>4}  {mark:<3}  {title}  {folder}"


def _session_json(record: SessionRecord) -> dict[str, Any]:
    data = asdict(record)
    data["command"] = list(record.command)
    data["run"] = is_run(record)
    return data


def _row_json(row: Row) -> dict[str, Any]:
    return {
        "seq": row.seq,
        "key": row.key,
        "kind": row.kind,
        "role": row.role,
        "turn": row.turn,
        "text": row.text,
        "payload": row.payload,
        "created": row.created,
        "updated": row.updated,
    }


async def transcript(engine: ReaderAPI, prefix: str) -> tuple[SessionRecord, list[Row]] | str:
    """The session whose id starts with `prefix` and its rows, or why there is none."""
    try:
        record = await engine.find_session(prefix)
    except KeyError as error:
        return str(error.args[0])
    return record, await engine.rows(record.id)


async def show_command(args: argparse.Namespace, home: Path) -> int:
    found = await read(args, home, lambda engine: transcript(engine, args.session))
    if isinstance(found, int):
        return found
    if isinstance(found, str):
        print(f"cockpit: {found}", file=sys.stderr)
        return EXIT_USAGE
    record, rows = found
    if args.json:
        print(
            json.dumps(
                {"session": _session_json(record), "rows": [_row_json(r) for r in rows]}, indent=2
            )
        )
    elif args.md:
        text = transcript_markdown(rows, record.title or f"Session {record.id}")
        sys.stdout.write(printable(text) if sys.stdout.isatty() else text)
    else:
        text = transcript_text(rows)
        sys.stdout.write(printable(text) if sys.stdout.isatty() else text)
    return EXIT_OK
