"""The engine benchmark: `python -m tests.bench.engine [--json] [--repeat N]`.

A real demo-agent subprocess streams the benchmark reply (12,476 chunks of 4 characters)
as fast as it can, through the SDK, the transport tap, the session inbox and the store.
Measured in the same run, side by side:

- raw: the same chunks folded and persisted by `Store` in process (no agent, no ACP);
- engine, 1 session: chunks/s from the prompt to the stop reason, and this process's CPU
  time per thousand chunks;
- engine, 8 sessions at once: the same, all eight streaming together.

The ratio engine / raw is what the engine (subprocess pipe, JSON, SDK validation, the
inbox) costs on top of folding and persisting.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from store import chunk_from_update
from store.store import Store
from store.workload import BENCH_SIZE, benchmark_reply, text_update

CHUNK = 4


async def raw_store(folder: Path, text: str) -> float:
    """Seconds to fold and persist the reply's chunks with the Store alone."""
    chunks = [
        chunk_from_update("s", text_update("agent_message_chunk", text[i : i + CHUNK]))
        for i in range(0, len(text), CHUNK)
    ]
    store = await Store.open(folder / "raw.db")
    await store.create_session(agent="raw", command=["raw"], cwd="/", session_id="s")
    started = time.perf_counter()
    await store.begin_turn("s", "bench")
    for chunk in chunks:
        await store.apply(chunk)
    await store.end_turn("s")
    await store.flush()
    elapsed = time.perf_counter() - started
    await store.close()
    return elapsed


async def engine_run(folder: Path, sessions: int, text: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) for `sessions` agents streaming at once."""
    engine = await Engine.open(folder, registry=load_registry(folder / "config"))
    try:
        records = [await engine.create_session("demo", folder) for _ in range(sessions)]
        await asyncio.gather(*(engine.start(r.id) for r in records))
        cpu, started = time.process_time(), time.perf_counter()
        reasons = await asyncio.gather(*(engine.prompt(r.id, "bench") for r in records))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        if reasons != ["end_turn"] * sessions:
            raise AssertionError(f"turns ended with {reasons}")
        for record in records:
            replies = [r.text for r in await engine.store.all_rows(record.id) if r.kind == "agent"]
            if replies != [text]:
                raise AssertionError("a transcript differs from what the agent sent")
    finally:
        await engine.close()
    return elapsed, cpu


async def measure(repeat: int) -> dict[str, Any]:
    text = benchmark_reply(BENCH_SIZE)
    chunks = len(text) // CHUNK
    raw, one, eight = [], [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as folder:
            base = Path(folder)
            raw.append(await raw_store(base, text))
            (base / "one").mkdir()
            one.append(await engine_run(base / "one", 1, text))
            (base / "eight").mkdir()
            eight.append(await engine_run(base / "eight", 8, text))
    raw_best = min(raw)
    one_wall, one_cpu = min(one)
    eight_wall, eight_cpu = min(eight)
    return {
        "chunks_per_session": chunks,
        "raw_store_chunks_per_s": round(chunks / raw_best),
        "engine_1_session_chunks_per_s": round(chunks / one_wall),
        "engine_8_sessions_chunks_per_s": round(8 * chunks / eight_wall),
        "engine_1_vs_raw": round(raw_best / one_wall, 3),
        "engine_8_vs_raw": round(raw_best * 8 / eight_wall, 3),
        "engine_cpu_ms_per_1000_chunks_1_session": round(one_cpu / chunks * 1e6, 1),
        "engine_cpu_ms_per_1000_chunks_8_sessions": round(eight_cpu / (8 * chunks) * 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.engine", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; the best is kept")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.repeat))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        width = max(map(len, result))
        for name, value in result.items():
            print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
