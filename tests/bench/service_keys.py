"""Keys while eight sessions stream, through the service: `python -m tests.bench.service_keys
[--json] [--runs N]`.

Eight real demo agents stream the benchmark reply (about 50 KB each) at once, the TUI
showing the first, while keys are typed into the composer every 50 ms: keypress-to-screen
latency, from posting the key to the first frame written with the composer repainted
after the key took effect (read where the app writes frames, as `tests.bench.tui` does),
p50, p95 and the worst, every press of the runs pooled. Measured in one run, runs
interleaved: the TUI attached to a service that runs the eight agents in another process,
against the baseline, the TUI on the engine in its own process (the in-process Cockpit).
Every reply is checked in the store.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI
from cockpit.remote.engine import RemoteEngine
from store.workload import BENCH_SIZE, benchmark_reply
from tests.bench.service_procs import running_service
from tests.bench.service_runs import local_engine
from tests.bench.service_stream import report
from tests.bench.tui import percentiles
from tests.bench.tui_runs import SIZE, keys_while_streaming, make_app, show

SESSIONS = 8
TARGETS = {"service_keypress_p95_ms": 50.0}


async def eight_streams(engine: EngineAPI, folder: Path, presses: int = 80) -> dict[str, Any]:
    """Keypress latencies while eight sessions stream, the first on screen; and the CPU
    wait of this process's thread during each press."""
    from cockpit.ui.composer import Composer

    records = [await engine.create_session("demo", folder) for _ in range(SESSIONS)]
    await asyncio.gather(*(engine.start(record.id) for record in records))
    app = make_app(engine, folder)
    async with app.run_test(size=SIZE) as pilot:
        await show(app, records[0].id)
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.pause()
        latencies, waits, reasons = await keys_while_streaming(
            app, composer, [partial(engine.prompt, r.id, "bench") for r in records], presses
        )
        await pilot.pause()
    if set(reasons) != {"end_turn"}:
        raise AssertionError(f"the turns ended with {sorted(set(reasons))}")
    text = benchmark_reply(BENCH_SIZE)
    for record in records:
        rows = await engine.rows(record.id)
        if [row.text for row in rows if row.kind == "agent"] != [text]:
            raise AssertionError("a stored reply differs from the text sent")
    return {"latencies_s": latencies, "waits_s": waits}


async def local_run(folder: Path) -> dict[str, Any]:
    engine = await local_engine(folder / "home")
    try:
        return await eight_streams(engine, folder)
    finally:
        await engine.close()


async def runs_interleaved(folder: Path, runs: int) -> dict[str, Any]:
    local: list[dict[str, Any]] = []
    remote: list[dict[str, Any]] = []
    for number in range(runs):
        place = folder / f"run-{number}"
        place.mkdir()
        local.append(await local_run(place))
        async with running_service(place / "service-home") as service:
            engine = await RemoteEngine.attach(service.connector(), name="bench-keys")
            try:
                remote.append(await eight_streams(engine, place))
            finally:
                await engine.close()
    return {**figures("service", remote), **figures("in_process", local)}


def figures(prefix: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = [x for run in runs for x in run["latencies_s"]]
    own = [
        latency - wait
        for run in runs
        for latency, wait in zip(run["latencies_s"], run["waits_s"], strict=True)
    ]
    return {
        f"{prefix}_presses": len(latencies),
        **{f"{prefix}_keypress_{k}": v for k, v in percentiles(latencies).items()},
        **{f"{prefix}_keypress_less_cpu_wait_{k}": v for k, v in percentiles(own).items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.service_keys", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--runs", type=int, default=2, help="runs of each, pooled")
    args = parser.parse_args(argv)
    from cockpit.ui.app import freeze_startup_objects

    freeze_startup_objects()
    with tempfile.TemporaryDirectory() as name:
        result = asyncio.run(runs_interleaved(Path(name), args.runs))
    p95 = result["service_keypress_p95_ms"] / result["in_process_keypress_p95_ms"]
    result["service_vs_in_process_p95"] = round(p95, 2)
    report(result, TARGETS, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
