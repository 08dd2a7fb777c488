"""What the service costs a stream: `python -m tests.bench.service_stream [--json]
[--rounds N]`.

A real demo agent streams the benchmark reply (about 50 KB in 12,476 chunks of 4
characters, as fast as it can) into a session the TUI shows, headless, until the whole
text is on screen. Measured in one run, rounds interleaved, best of each:

- the TUI attached to a service (in another process): the CPU of both processes together
  (user + system; the service's from /proc, not counting the agent, a child of it);
- the baseline, the TUI on the engine in its own process (the in-process Cockpit): the
  CPU of that one process (the agent not counted either);
- a client of the service that renders nothing (it shows the session and drops the
  frames): what the service and the wire cost without a screen.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cockpit.remote.engine import RemoteEngine
from tests.bench.service_procs import running_service
from tests.bench.service_runs import bare_client_cpu, local_engine, no_other_cpu, tui_stream_cpu
from tests.support.proc_stat import cpu_seconds

TARGETS = {"service_tui_vs_in_process_tui": 1.15}


async def local_round(folder: Path) -> float:
    engine = await local_engine(folder / "home")
    try:
        return await tui_stream_cpu(engine, folder, no_other_cpu)
    finally:
        await engine.close()


async def rounds_interleaved(folder: Path, rounds: int) -> dict[str, Any]:
    """`rounds` of each run, one of each in turn, the service's runs on one service."""
    local: list[float] = []
    tui: list[float] = []
    bare: list[float] = []
    frames = 0
    async with running_service(folder / "service-home") as service:

        def service_cpu() -> float:
            """The service's own CPU: not its agents', as an in-process Cockpit's
            counts none either."""
            return cpu_seconds(service.pid)

        for number in range(rounds):
            place = folder / f"round-{number}"
            place.mkdir()
            local.append(await local_round(place))
            engine = await RemoteEngine.attach(service.connector(), name="bench-tui")
            try:
                tui.append(await tui_stream_cpu(engine, place, service_cpu))
            finally:
                await engine.close()
            engine = await RemoteEngine.attach(service.connector(), name="bench-bare")
            try:
                cpu, frames = await bare_client_cpu(engine, place, service_cpu)
                bare.append(cpu)
            finally:
                await engine.close()
    best_local, best_tui, best_bare = min(local), min(tui), min(bare)
    return {
        "frames_per_reply": frames,
        "in_process_tui_cpu_s": round(best_local, 3),
        "service_tui_cpu_s": round(best_tui, 3),
        "service_bare_client_cpu_s": round(best_bare, 3),
        "service_tui_vs_in_process_tui": round(best_tui / best_local, 3),
        "service_tui_vs_bare_client": round(best_tui / best_bare, 3),
        "median_service_tui_vs_in_process_tui": round(
            statistics.median(tui) / statistics.median(local), 3
        ),
        "each_round_in_process_tui_cpu_s": [round(x, 3) for x in local],
        "each_round_service_tui_cpu_s": [round(x, 3) for x in tui],
        "each_round_service_bare_client_cpu_s": [round(x, 3) for x in bare],
    }


def measure(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        return asyncio.run(rounds_interleaved(Path(name), rounds))


def report(result: dict[str, Any], targets: Mapping[str, float], as_json: bool) -> None:
    """Print the figures, each target said met or missed."""
    if as_json:
        met = {k: result[k] <= v for k, v in targets.items() if k in result}
        print(json.dumps({**result, "targets_met": met}, indent=2))
        return
    width = max(map(len, result))
    for key, value in result.items():
        target = ""
        if key in targets:
            verdict = "met" if value <= targets[key] else "MISSED"
            target = f"  target <= {targets[key]}: {verdict}"
        print(f"{key:<{width}}  {value}{target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.service_stream", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each (best counts)")
    args = parser.parse_args(argv)
    from cockpit.ui.app import freeze_startup_objects

    freeze_startup_objects()  # as `cockpit` does before its app runs
    report(measure(args.rounds), TARGETS, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
