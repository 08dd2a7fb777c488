"""`cockpit ls` and `cockpit show`: the stored sessions and their transcripts."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.api import Row
from cockpit.cli.connect import open_engine
from cockpit.cli.exits import EXIT_OK, EXIT_USAGE
from cockpit.text.sanitize import printable
from cockpit.text.textout import age, transcript_markdown, transcript_text


async def ls_command(args: argparse.Namespace, home: Path) -> int:
    engine = await open_engine(home)
    try:
        sessions = await engine.sessions()
    finally:
        await engine.close()
    if args.json:
        print(json.dumps([_session_json(s) for s in sessions], indent=2))
        return EXIT_OK
    if not sessions:
        print('No sessions yet. Start one with: cockpit run "your prompt"')
        return EXIT_OK
    now = time.time()
    for s in sessions:
        title = printable(s.title or "(untitled)")
        print(f"{s.id}  {s.status:<8} {s.agent:<12} {age(now - s.updated):>4}  {title}  [{s.cwd}]")
    return EXIT_OK


def _session_json(record: Any) -> dict[str, Any]:
    data = asdict(record)
    data["command"] = list(record.command)
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


async def show_command(args: argparse.Namespace, home: Path) -> int:
    engine = await open_engine(home)
    try:
        try:
            record = await engine.find_session(args.session)
        except KeyError as error:
            print(f"cockpit: {error.args[0]}", file=sys.stderr)
            return EXIT_USAGE
        rows = await engine.rows(record.id)
    finally:
        await engine.close()
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
