"""Attaching to a busy service against starting cold: `python -m tests.bench.service_attach
[--json] [--rounds N]`.

A store of 20 sessions, each with a turn of its own. Each round measures, in a fresh
process each, the time from the process's start to the first complete screen (every
session on the rail, the session that reopens shown from its tail page, and a frame
drawn after that), the TUI opened as `cockpit` opens it (`open_engine` from
`cockpit.client`, inside the app, after `freeze_startup_objects`):

- attached to the store's service, which runs two of the sessions streaming meanwhile:
  at a model's pace (the demo's slow reply, 20 chunks a second; the figure the target
  is for), and, apart, as fast as the demo agent can (the benchmark reply: the two agents
  and the service then take most of two cores, and the new client competes for them);
- the baseline: a cold start of the engine in the process (`--local`), on the same store
  (the service stopped: two programs never write a store at once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cockpit.api import Status
from cockpit.remote.engine import RemoteEngine
from tests.bench.service_procs import running_service
from tests.bench.service_runs import local_engine
from tests.bench.service_stream import report
from tests.bench.tui import _process_start
from tests.bench.tui_runs import SIZE, wait_for

SESSIONS = 20
STREAMING = 2
STREAM_SIZE = 2_000_000
"""The reply the two sessions stream while clients attach (long enough to last the
attach; the service stops them at the end of the round)."""

TARGETS = {"attach_vs_cold_start": 1.0}


async def make_store(home: Path, folder: Path) -> list[str]:
    """The 20 sessions, each with one stored turn (no agent involved); their ids."""
    from store import chunk_from_update
    from store.workload import markdown_reply, text_update

    engine = await local_engine(home)
    ids = []
    try:
        for number in range(SESSIONS):
            record = await engine.create_session("demo", folder, title=f"session {number}")
            await engine.store.begin_turn(record.id, f"question {number}")
            reply = markdown_reply(random.Random(number), 3000)
            await engine.store.apply(
                chunk_from_update(record.id, text_update("agent_message_chunk", reply))
            )
            await engine.store.end_turn(record.id)
            ids.append(record.id)
    finally:
        await engine.close()
    return ids


async def first_screen(home: Path, folder: Path, local: bool) -> float:
    """In a fresh process: open the TUI as `cockpit` does; when its first complete
    screen is drawn (time.time())."""
    from cockpit.api import EngineAPI
    from cockpit.client import Reach, open_engine
    from cockpit.ui.app import CockpitApp
    from cockpit.ui.transcript import TranscriptView

    async def engine() -> EngineAPI:
        return await open_engine(home, reach=Reach(local=local), start=False)

    app = CockpitApp(
        engine,
        folder=folder,
        blink=False,
        settings_file=folder / "settings.json",
        themes_dir=folder / "themes",
    )

    def complete() -> bool:
        if not app.is_running or app.current is None or len(app.records) < SESSIONS:
            return False
        views = app.query(TranscriptView)
        if not views:
            return False
        view = views.first()
        return view.session == app.current and view._busy is None and len(view.model) > 0

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(complete, 60, "the first complete screen")
        await pilot.pause()
        return time.time()


def child(home: Path, folder: Path, local: bool) -> float:
    """Seconds from a fresh process's start to its first complete screen."""
    command = [sys.executable, "-m", "tests.bench.service_attach", "--child", str(home)]
    command += ["--folder", str(folder)] + (["--local"] if local else [])
    env = {**os.environ, "COCKPIT_HOME": str(home)}
    env.pop("COCKPIT_LOCAL", None)
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    seconds: float = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
    return seconds


async def streaming_service_round(
    home: Path, folder: Path, sessions: list[str], prompt: str
) -> float:
    """Start the service, set two sessions streaming with `prompt`, attach a fresh TUI;
    its time to the first complete screen."""
    async with running_service(home) as service:
        driver = await RemoteEngine.attach(service.connector(), name="bench-driver")
        streaming = sessions[:STREAMING]
        try:
            await asyncio.gather(*(driver.start(session) for session in streaming))
            for session in streaming:
                driver.send(session, prompt)
            await wait_for(
                lambda: all(driver.status(s) == Status.WORKING for s in streaming),
                30,
                "the two sessions to stream",
            )
            await asyncio.sleep(0.3)  # well into the streams
            seconds = await asyncio.to_thread(child, home, folder, False)
            if not all(driver.status(s) == Status.WORKING for s in streaming):
                raise AssertionError("the streams ended before the attach did: make them longer")
            return seconds
        finally:
            await driver.close()


PROMPTS = {"paced": "slow", "flat_out": f"bench {STREAM_SIZE}"}
"""How the two sessions stream: at a model's pace (the demo's slow reply, 20 chunks a
second), or as fast as the demo agent can (the benchmark reply: the two agents and the
service then take most of two cores)."""


def measure(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        home = folder / "home"
        sessions = asyncio.run(make_store(home, folder))
        cold: list[float] = []
        attach: dict[str, list[float]] = {kind: [] for kind in PROMPTS}
        for _ in range(rounds):
            cold.append(child(home, folder, True))
            for kind, prompt in PROMPTS.items():
                seconds = asyncio.run(streaming_service_round(home, folder, sessions, prompt))
                attach[kind].append(seconds)
    paced, flat_out = attach["paced"], attach["flat_out"]
    return {
        "sessions": SESSIONS,
        "streaming_in_the_service": STREAMING,
        "cold_start_first_screen_s": round(min(cold), 3),
        "attach_paced_first_screen_s": round(min(paced), 3),
        "attach_vs_cold_start": round(min(paced) / min(cold), 3),
        "attach_flat_out_first_screen_s": round(min(flat_out), 3),
        "attach_flat_out_vs_cold_start": round(min(flat_out) / min(cold), 3),
        "median_attach_vs_cold_start": round(statistics.median(paced) / statistics.median(cold), 3),
        "median_attach_flat_out_vs_cold_start": round(
            statistics.median(flat_out) / statistics.median(cold), 3
        ),
        "each_round_cold_start_s": [round(x, 3) for x in cold],
        "each_round_attach_paced_s": [round(x, 3) for x in paced],
        "each_round_attach_flat_out_s": [round(x, 3) for x in flat_out],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.service_attach", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (best and median count)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--local", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        from cockpit.ui.app import freeze_startup_objects

        freeze_startup_objects()  # as `cockpit` does before its app runs
        painted = asyncio.run(first_screen(Path(args.child), Path(args.folder), args.local))
        print(json.dumps({"seconds": painted - _process_start()}))
        return 0
    report(measure(args.rounds), TARGETS, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
