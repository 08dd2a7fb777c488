"""The streaming benchmark in a real terminal: `python -m cockpit.bench_terminal [--json]`.

Cockpit runs in tmux (120x40) on a fresh store; the demo agent streams the benchmark
reply (10, 25 and 50 KB in 4-character chunks, ending with a marker line) as fast as it
can. For each size this measures, in the same run:

- Cockpit's CPU time (its process, read from /proc) from the prompt to the moment the
  marker line is on the terminal (tmux capture-pane, polled every 10 ms);
- how long after the agent's last chunk the marker appeared (the agent logs when it
  sent it);
- the baseline: the same text through a bare Textual `MarkdownStream`, headless.

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

from cockpit.bench_tui import bare_markdown_stream
from store.workload import BENCH_MARKER, BENCH_SIZE, benchmark_reply

SIZES = (10_000, 25_000, BENCH_SIZE)
SESSION = "cockpit-bench"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", SESSION)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(condition: Any, timeout: float, step: float = 0.01) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.time()
        time.sleep(step)
    raise TimeoutError("the terminal never showed what was expected")


def run_size(size: int, home: Path, folder: Path) -> dict[str, Any]:
    """One run of Cockpit in tmux for the reply of `size` characters."""
    env = {**os.environ, "COCKPIT_HOME": str(home), "TERM": "xterm-256color"}
    command = [sys.executable, "-m", "cockpit", str(folder)]
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", SESSION, "-x", "120", "-y", "40", *command],
        check=True,
        env=env,
    )
    try:
        pid = int(tmux("list-panes", "-t", SESSION, "-F", "#{pane_pid}").split()[0])
        wait_for(lambda: "· ready" in screen(), 30)
        time.sleep(0.5)
        before = cpu_seconds(pid)
        tmux("send-keys", "-t", SESSION, f"bench {size}", "Enter")
        try:
            seen = wait_for(lambda: BENCH_MARKER in screen(), 60)
        except TimeoutError:
            raise TimeoutError(f"no marker on the terminal; it shows:\n{screen()}") from None
        cpu = cpu_seconds(pid) - before
        final = screen()
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
    if replies != [benchmark_reply(size)]:
        raise AssertionError("the stored reply differs from the text the agent sent")
    return {
        "cpu_s": cpu,
        "marker_after_last_chunk_s": seen - sent,
        "marker_line_on_screen": any(BENCH_MARKER in line for line in final.splitlines()),
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


def measure() -> dict[str, Any]:
    result: dict[str, Any] = {}
    for size in SIZES:
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
    small, middle, large = (result[f"terminal_{round(s / 1000)}kb_cockpit_cpu_s"] for s in SIZES)
    result["terminal_growth_25kb_vs_10kb"] = round(middle / small, 2)
    result["terminal_growth_50kb_vs_25kb"] = round(large / middle, 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cockpit.bench_terminal", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if shutil.which("tmux") is None:
        print("cockpit.bench_terminal needs tmux", file=sys.stderr)
        return 2
    result = measure()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        width = max(map(len, result))
        for name, value in result.items():
            print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
