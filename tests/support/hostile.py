"""The long hostile-agent run: the tiny agent sends thousands of seeded hostile lines (one
of them 10 MB) through `cockpit run`, the engine and the TUI. `cockpit run` must exit in
time, store every valid chunk in order and a row for every request the SDK refused (past
100, one row counts them), keep its store intact and stay within its memory;
the engine and the TUI must store every valid chunk and take the next prompt (the TUI
also completes `/` after it). `tests/ui/test_hostile_agent.py` runs a short version in CI.

    .venv/bin/python -m tests.support.hostile --lines 10000 --seed 7 [--through run,engine,tui]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY
from tests.ui.test_hostile_agent import (
    agent_text,
    check_refused_rows,
    engine_takes_hostile_lines,
    refused_by_the_sdk,
    told_count,
    tui_takes_hostile_lines,
    valid_words,
)

WITHIN = 120.0
"""Seconds each run may take in all."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--huge", type=int, default=10_000_000, help="bytes of the longest line")
    parser.add_argument("--through", default="run,engine,tui", help="run, engine, tui")
    options = parser.parse_args()
    prompt = f"hostile n={options.lines} seed={options.seed} huge={options.huge}"
    log = Path(tempfile.mkdtemp(prefix="cockpit-hostile-")) / "cockpit.log"  # private
    logging.basicConfig(filename=log, filemode="w", level=logging.WARNING)  # as the app does
    print(f"the engine's and the TUI's log: {log}")
    failed = False
    for through in options.through.split(","):
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            os.environ["COCKPIT_HOME"] = str(tmp / "home")
            if through == "run":
                failed |= through_run(tmp, prompt, options) != 0
            else:
                failed |= through_process(tmp, prompt, through) != 0
    return 1 if failed else 0


def through_process(tmp: Path, prompt: str, through: str) -> int:
    """The engine, or the TUI (headless, at 80x24), in this process."""
    started = time.monotonic()
    run = engine_takes_hostile_lines if through == "engine" else tui_takes_hostile_lines
    try:
        asyncio.run(asyncio.wait_for(run(tmp, prompt), WITHIN))
        problem = None
    except (AssertionError, TimeoutError):
        problem = traceback.format_exc(limit=-2)
    took = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{through}: {'ok' if problem is None else 'FAILED'} in {took:.1f} s, "
        f"peak memory of this process {peak_mb:.0f} MB"
    )
    if problem is not None:
        print("PROBLEM:", problem[:2000])
    return 0 if problem is None else 1


def through_run(tmp: Path, prompt: str, options: argparse.Namespace) -> int:
    """`cockpit run`, a process of its own."""
    project = tmp / "project"
    project.mkdir()
    started = time.monotonic()
    try:
        result = cockpit(
            tmp / "home", "run", "--cwd", str(project), "--agent-cmd",
            f"{sys.executable} {TINY}", prompt,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        print("cockpit run did not exit within 120 s")
        return 1
    took = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    with sqlite3.connect(tmp / "home" / "cockpit.db") as db:
        stored = db.execute("SELECT kind, text, payload FROM messages ORDER BY seq").fetchall()
        (agent_session_id,) = db.execute("SELECT agent_session_id FROM sessions").fetchone()
        (integrity,) = db.execute("PRAGMA integrity_check").fetchone()
    rows = [(kind, text) for kind, text, _ in stored]
    text = agent_text(rows)
    count = told_count(text) if "still here after " in text else -1
    problems = []
    if result.returncode != 0:
        problems.append(f"exit code {result.returncode}: {result.stderr[-500:]}")
    if result.stderr:
        problems.append(f"stderr: {result.stderr[-500:]}")
    if text != valid_words(count) + f"still here after {count} valid chunks":
        problems.append("the stored reply is not every valid chunk in order")
    if integrity != "ok":
        problems.append(f"integrity check: {integrity}")
    try:
        check_refused_rows(
            [(kind, text, json.loads(payload or "null")) for kind, text, payload in stored],
            refused_by_the_sdk(prompt, agent_session_id),
        )
    except AssertionError:
        problems.append("a request the SDK refused left no row")
    print(
        f"run: {options.lines} hostile lines (seed {options.seed}, longest {options.huge:,} "
        f"bytes): exit {result.returncode} in {took:.1f} s, {count} valid chunks stored, "
        f"{len(rows)} rows, peak memory of a child {peak_mb:.0f} MB"
    )
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
