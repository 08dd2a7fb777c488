"""The streaming benchmark in a real terminal: `python -m tests.bench.terminal [--json]`.

Cockpit runs in tmux (120x40) on a fresh store; the demo agent streams the benchmark
reply (10, 25 and 50 KB in 4-character chunks, ending with a marker line) as fast as it
can. For each size this measures, in the same run:

- Cockpit's CPU time (its process, read from /proc) from the prompt to the moment the
  marker line is on the terminal (tmux capture-pane, polled every 10 ms);
- how long after the agent's last chunk the marker appeared (the agent logs when it
  sent it);
- the baseline: the same text through a bare Textual `MarkdownStream`, headless.

Then the window is made tall enough for the whole reply and the terminal checked: the
heading and the marker line on it, and every table intact (its header, the separator
line under it and each of its rows, in order, on consecutive lines). The stored reply is
checked against the text sent.

Needs tmux.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from store.workload import BENCH_MARKER, BENCH_SIZE, benchmark_reply
from tests.bench.tui_runs import bare_markdown_stream
from tests.support.proc_stat import cpu_seconds

SIZES = (10_000, 25_000, BENCH_SIZE)
SESSION = "cockpit-bench"
READY = re.compile(r"\bready\b")
"""The status line's word for a session waiting for a prompt."""

TALL = 1500
"""Rows of the window the whole reply is checked in (the 50 KB reply is about 900 lines)."""


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def wait_for(condition: Any, timeout: float, what: str, step: float = 0.01) -> float:
    """Poll until `condition()`; the time it held, or TimeoutError with the pane."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.time()
        time.sleep(step)
    raise TimeoutError(f"after {timeout:.0f} s the terminal shows no {what}; it shows:\n{screen()}")


FIRST_START_TIMEOUT = 120.0
"""Seconds to wait for the first start of a run (cold caches: imports, bytecode, the
agent's own start) to show the session ready."""

START_TIMEOUT = 45.0
"""The same for later starts."""

_started = False


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The markdown tables of `text`: (header cells, rows of cells), in order."""
    found: list[tuple[list[str], list[list[str]]]] = []
    block: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif block:
            found.append((block[0], block[2:]))
            block = []
    return found


def _cells(cells: list[str]) -> re.Pattern[str]:
    return re.compile(r"\s+".join(re.escape(cell) for cell in cells))


def table_problems(shown: str, text: str) -> list[str]:
    """What is wrong with the tables of `text` on the terminal `shown`: each must appear
    whole, in order: its header, a separator line, then every row on the next lines."""
    lines = shown.splitlines()
    problems: list[str] = []
    at = 0
    for number, (header, rows) in enumerate(tables(text), start=1):
        pattern = _cells(header)
        start = next((i for i in range(at, len(lines)) if pattern.search(lines[i])), None)
        if start is None:
            problems.append(f"table {number}: no header on the terminal")
            continue
        if start + 1 >= len(lines) or "─" * 8 not in lines[start + 1]:
            problems.append(f"table {number}: no separator line under its header")
        for offset, row in enumerate(rows, start=2):
            y = start + offset
            if y >= len(lines) or not _cells(row).search(lines[y]):
                problems.append(f"table {number}: row {offset - 1} ({' | '.join(row)}) missing")
        at = start + len(rows) + 2
    if not tables(text):
        problems.append("the text has no tables")
    return problems


def run_size(size: int, home: Path, folder: Path) -> dict[str, Any]:
    """One run of Cockpit in tmux for the reply of `size` characters."""
    env = {**os.environ, "COCKPIT_HOME": str(home), "TERM": "xterm-256color"}
    command = [sys.executable, "-m", "cockpit", str(folder)]
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40", *command],
        check=True,
        env=env,
    )
    global _started
    text = benchmark_reply(size)
    try:
        pid = int(tmux("list-panes", "-t", SESSION, "-F", "#{pane_pid}").split()[0])
        timeout = START_TIMEOUT if _started else FIRST_START_TIMEOUT
        wait_for(lambda: READY.search(screen()) is not None, timeout, "session ready")
        _started = True
        time.sleep(0.5)
        before = cpu_seconds(pid)
        tmux("send-keys", "-t", SESSION, f"bench {size}", "Enter")
        seen = wait_for(lambda: BENCH_MARKER in screen(), 60, "marker line")
        cpu = cpu_seconds(pid) - before
        final = screen()
        tmux("resize-window", "-t", SESSION, "-x", "120", "-y", str(TALL))
        wait_for(
            lambda: BENCH_MARKER in screen() and text.splitlines()[0].lstrip("# ") in screen(),
            30,
            f"whole reply in a window of {TALL} lines",
        )
        time.sleep(0.5)  # any repaint still on its way
        whole = screen()
        logs = list((home / "logs").glob("*.log"))
        sent = max(
            float(m)
            for log in logs
            for m in re.findall(r"bench reply sent at ([0-9.]+)", log.read_text())
        )
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], check=False, capture_output=True)
    stored = subprocess.run(
        [sys.executable, "-m", "cockpit", "show", "--json", _only_session(home)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    replies = [row["text"] for row in json.loads(stored.stdout)["rows"] if row["kind"] == "agent"]
    if replies != [text]:
        raise AssertionError("the stored reply differs from the text the agent sent")
    if not any(BENCH_MARKER in line for line in final.splitlines()):
        raise AssertionError(f"the marker line is not on the terminal; it shows:\n{final}")
    problems = table_problems(whole, text)
    if problems:
        raise AssertionError("tables on the terminal: " + "; ".join(problems) + f"\n{whole}")
    return {
        "cpu_s": cpu,
        "marker_after_last_chunk_s": seen - sent,
        "tables_intact": len(tables(text)),
    }


def _only_session(home: Path) -> str:
    listed = subprocess.run(
        [sys.executable, "-m", "cockpit", "ls", "--json"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "COCKPIT_HOME": str(home)},
    )
    sessions = json.loads(listed.stdout)
    return str(sessions[0]["id"])


def measure(sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for size in sizes:
        runs = []
        for _ in range(2):
            with tempfile.TemporaryDirectory() as name:
                folder = Path(name) / "project"
                folder.mkdir()
                runs.append(run_size(size, Path(name) / "home", folder))
        best = min(runs, key=lambda run: run["cpu_s"])
        bare = min(asyncio.run(bare_markdown_stream(benchmark_reply(size))) for _ in range(2))
        kb = round(size / 1000)
        result[f"terminal_{kb}kb_cockpit_cpu_s"] = round(best["cpu_s"], 2)
        result[f"terminal_{kb}kb_bare_markdownstream_cpu_s"] = round(bare, 2)
        result[f"terminal_{kb}kb_ratio_cockpit_vs_bare"] = round(best["cpu_s"] / bare, 3)
        result[f"terminal_{kb}kb_marker_after_last_chunk_s"] = round(
            max(r["marker_after_last_chunk_s"] for r in runs), 3
        )
        result[f"terminal_{kb}kb_tables_intact_every_run"] = best["tables_intact"]
    if sizes == SIZES:
        small, middle, large = (
            result[f"terminal_{round(s / 1000)}kb_cockpit_cpu_s"] for s in SIZES
        )
        result["terminal_growth_25kb_vs_10kb"] = round(middle / small, 2)
        result["terminal_growth_50kb_vs_25kb"] = round(large / middle, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.terminal", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--size", type=int, action="append", help="only this reply size (repeatable)"
    )
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("tests.bench.terminal needs tmux", file=sys.stderr)
        return 2
    result = measure(tuple(args.size or SIZES))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        width = max(map(len, result))
        for name, value in result.items():
            print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
