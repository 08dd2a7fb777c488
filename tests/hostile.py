"""The long hostile-agent run: `cockpit run` against the tiny agent sending thousands of
seeded hostile lines (one of them 10 MB), then the check that it exited in time, stored
every valid chunk in order, kept its store intact and stayed within its memory.
`tests/test_hostile_agent.py` runs a short version in CI.

    .venv/bin/python -m tests.hostile --lines 10000 --seed 7
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.test_cli import cockpit
from tests.test_engine_restart import TINY
from tests.test_hostile_agent import agent_text, told_count, valid_words


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--huge", type=int, default=10_000_000, help="bytes of the longest line")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        project = tmp / "project"
        project.mkdir()
        prompt = f"hostile n={options.lines} seed={options.seed} huge={options.huge}"
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
            rows = db.execute("SELECT kind, text FROM messages ORDER BY seq").fetchall()
            (integrity,) = db.execute("PRAGMA integrity_check").fetchone()
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
    print(
        f"{options.lines} hostile lines (seed {options.seed}, longest {options.huge:,} bytes): "
        f"exit {result.returncode} in {took:.1f} s, {count} valid chunks stored, "
        f"{len(rows)} rows, peak memory of a child {peak_mb:.0f} MB"
    )
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
