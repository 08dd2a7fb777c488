"""The service's memory with a client that does not read: `python -m tests.bench.service_memory
[--json] [--rounds N]`.

Eight real demo agents stream the benchmark reply (about 50 KB each, 12,476 chunks) at
once in a service, in its own process, with a client attached that shows the first
session and reads. The service's resident memory (VmRSS, from /proc) is sampled every
20 ms from before the prompts until every turn has ended; the figure is its peak. Measured
in one run, each round on a fresh service, rounds interleaved:

- with a second client, in a process of its own, showing the first session too and
  stopped with SIGSTOP before the prompts (a laptop lid closed): everything sent to it
  waits in the service, up to its outbox's bound (`cockpit.service.link.OUTBOX_BYTES`);
- the same, the stopped client watching all eight sessions (the worst a client can do: its
  outbox reaches the bound, is dropped, and the client reads again when it wakes);
- the baseline: no stopped client.

After each round with a stopped client, it is woken (SIGCONT) and must end holding what
the store holds.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import tempfile
from pathlib import Path
from typing import Any

from cockpit.remote.engine import RemoteEngine
from tests.bench.service_client import StoppableClient, digest
from tests.bench.service_procs import rss_mb, running_service
from tests.bench.service_stream import report

SESSIONS = 8
TARGETS = {"stopped_client_vs_none": 1.2}


async def one_round(folder: Path, stopped: str | None) -> dict[str, float]:
    """Peak RSS of a fresh service while eight sessions stream; `stopped`: none, "one"
    (a stopped client shows the first session) or "all" (it watches all eight)."""
    async with running_service(folder / "home") as service:
        driver = await RemoteEngine.attach(service.connector(), name="bench-reader")
        sleeper: StoppableClient | None = None
        try:
            records = [await driver.create_session("demo", str(folder)) for _ in range(SESSIONS)]
            await asyncio.gather(*(driver.start(record.id) for record in records))
            driver.show(records[0].id)
            await driver.page(records[0].id)
            if stopped is not None:
                sleeper = StoppableClient(service.home)
                await sleeper.ask(f"show {records[0].id}")
                if stopped == "all":
                    await sleeper.ask("watch " + ",".join(r.id for r in records))
                sleeper.signal(signal.SIGSTOP)
            before = rss_mb(service.pid)
            peak = before
            turns = asyncio.gather(*(driver.prompt(r.id, "bench") for r in records))
            while not turns.done():
                peak = max(peak, rss_mb(service.pid))
                await asyncio.wait([turns], timeout=0.02)
            if set(await turns) != {"end_turn"}:
                raise AssertionError("a turn did not end normally")
            if sleeper is not None:
                sleeper.signal(signal.SIGCONT)
                await caught_up(sleeper, driver, records[0].id)
            return {"before_mb": before, "peak_mb": peak}
        finally:
            if sleeper is not None:
                sleeper.close()
            await driver.close()


async def caught_up(sleeper: StoppableClient, driver: RemoteEngine, session: str) -> None:
    """Wait until the woken client holds what the store holds of the session it shows."""
    page = await driver.page(session)
    rows = [[r.key, r.kind, len(r.text), digest(r.text)] for r in page.rows]
    state: dict[str, Any] = {}

    async def check() -> None:
        state.update(await sleeper.ask("check"))

    for _ in range(600):
        await check()
        if state["idle"] and state["bubbles"] == rows:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the woken client holds {state['bubbles']}, the store {rows}")


async def rounds_interleaved(folder: Path, rounds: int) -> dict[str, Any]:
    kinds: dict[str, str | None] = {"none": None, "one": "one", "all": "all"}
    peaks: dict[str, list[float]] = {kind: [] for kind in kinds}
    befores: dict[str, list[float]] = {kind: [] for kind in kinds}
    for number in range(rounds):
        for kind, stopped in kinds.items():
            place = folder / f"{kind}-{number}"
            place.mkdir()
            measured = await one_round(place, stopped)
            peaks[kind].append(measured["peak_mb"])
            befores[kind].append(measured["before_mb"])
    peak = {kind: statistics.median(values) for kind, values in peaks.items()}
    return {
        "service_peak_rss_no_stopped_client_mb": round(peak["none"], 1),
        "service_peak_rss_stopped_client_showing_one_mb": round(peak["one"], 1),
        "service_peak_rss_stopped_client_watching_all_eight_mb": round(peak["all"], 1),
        "stopped_client_vs_none": round(peak["one"] / peak["none"], 3),
        "stopped_client_watching_all_vs_none": round(peak["all"] / peak["none"], 3),
        "service_rss_before_the_prompts_mb": round(statistics.median(befores["none"]), 1),
        "each_round_peak_mb": {k: [round(x, 1) for x in v] for k, v in peaks.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.service_memory", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (the median counts)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memory-") as name:
        result = asyncio.run(rounds_interleaved(Path(name), args.rounds))
    report(result, TARGETS, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
