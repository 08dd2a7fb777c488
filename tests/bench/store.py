"""The store benchmark: `python -m tests.bench.store [--json] [--turns N] [--repeat N]`.

Every variant runs on the same realistic stream (`store.workload`) in the same process,
interleaved repetition by repetition, and the figures that matter are ratios between
variants, which stay meaningful on a shared, noisy machine:

- fold: the pure folding rules over the stream, in memory (chunks/s);
- persisted: the same stream through `Store` (fold + coalesced writes + final flush);
- ceiling: the fold, then the same final rows inserted in ONE transaction with
  executemany; the best any store that folds can do (insert-only time reported too);
- naive: one INSERT and one commit per chunk, as row-per-token stores do;
- rows per logical message (must be exactly 1.0);
- tail-page latency on a 100k-message session against a 1k-message one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import aiosqlite

from store.chunks import Chunk, chunk_from_update
from store.session_fold import SessionFold, dump_json
from store.sql import WRITE_COLUMNS, row_values
from store.store import Store
from store.workload import Workload, realistic_stream

SESSION = "bench"
Event = tuple[str, Any]


def normalised(work: Workload) -> list[Event]:
    """The workload with each update already normalised to a Chunk (outside every timing)."""
    return [
        ("chunk", chunk_from_update(SESSION, payload)) if name == "update" else (name, payload)
        for name, payload in work.events
    ]


def fold_only(events: list[Event]) -> SessionFold:
    """Run the pure fold over the events; return it holding every row."""
    fold = SessionFold(SESSION)
    now = 0.0
    rows = {}
    for name, payload in events:
        if name == "chunk":
            fold.apply(payload, now)
        elif name == "prompt":
            fold.begin_turn(payload, None, now)
        else:
            fold.seal()
        for seq, row in fold.unsaved.items():
            rows[seq] = row
        fold.unsaved.clear()
    fold.unsaved.update(rows)
    return fold


async def persisted(events: list[Event], path: Path) -> None:
    """The stream through the real Store, closed (everything written) at the end."""
    store = await Store.open(path)
    await store.create_session(agent="bench", command=["bench"], cwd="/", session_id=SESSION)
    for name, payload in events:
        if name == "chunk":
            await store.apply(payload)
        elif name == "prompt":
            await store.begin_turn(SESSION, payload)
        else:
            await store.end_turn(SESSION)
    await store.close()


async def ceiling(events: list[Event], path: Path) -> float:
    """Fold in memory, then insert the final rows in one transaction; returns insert seconds."""
    fold = fold_only(events)
    rows = [row.snapshot() for row in sorted(fold.unsaved.values(), key=lambda row: row.seq)]
    started = time.perf_counter()
    store = await Store.open(path)
    await store.create_session(agent="bench", command=["bench"], cwd="/", session_id=SESSION)
    await store.close()
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA synchronous = NORMAL")
        await db.execute("BEGIN")
        await db.executemany(
            f"INSERT INTO messages ({WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row_values(row) for row in rows],
        )
        await db.execute("COMMIT")
    return time.perf_counter() - started


async def naive(events: list[Event], path: Path) -> None:
    """One row per chunk, each inserted and committed on its own."""
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = NORMAL")
        await db.execute(
            "CREATE TABLE chunks (id INTEGER PRIMARY KEY, session TEXT, kind TEXT, text TEXT,"
            " payload TEXT, created REAL)"
        )
        for name, payload in events:
            if name == "end":
                continue
            chunk: Chunk | None = payload if name == "chunk" else None
            await db.execute("BEGIN")
            await db.execute(
                "INSERT INTO chunks (session, kind, text, payload, created) VALUES (?, ?, ?, ?, ?)",
                (
                    SESSION,
                    chunk.update if chunk else "prompt",
                    chunk.text if chunk else payload,
                    dump_json(dict(chunk.data)) if chunk and chunk.data else None,
                    time.time(),
                ),
            )
            await db.execute("COMMIT")


async def rows_per_message(events: list[Event], work: Workload, path: Path) -> float:
    """Persist the stream and check the rows against the logical messages."""
    await persisted(events, path)
    store = await Store.open(path)
    rows = await store.all_rows(SESSION)
    await store.close()
    expected = [(kind, text) for kind, text in work.messages]
    got = [(row.kind, row.text if row.kind not in ("tool", "plan") else "") for row in rows]
    if got != expected:
        raise AssertionError("the persisted transcript differs from the messages sent")
    return len(rows) / len(work.messages)


async def build_session(path: Path, messages: int) -> Store:
    """A store holding one session of `messages` rows (about 400 bytes each)."""
    store = await Store.open(path)
    await store.create_session(agent="bench", command=["bench"], cwd="/", session_id=SESSION)
    await store.close()
    async with aiosqlite.connect(path, isolation_level=None) as db:
        await db.execute("BEGIN")
        await db.executemany(
            "INSERT INTO messages (session, seq, key, kind, role, turn, bytes, created, updated,"
            " payload, text) VALUES (?, ?, ?, 'agent', 'agent', ?, 400, 0, 0, NULL, ?)",
            (
                (SESSION, seq, f"agent:{seq}:@{seq}", seq // 5, "x" * 400)
                for seq in range(1, messages + 1)
            ),
        )
        await db.execute("COMMIT")
    return await Store.open(path)


async def tail_latencies(big: Store, small: Store, reads: int) -> tuple[float, float]:
    """Median seconds of a tail-page read in each store, reads alternating between them so
    that both see the same machine."""
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(reads):
        for store, into in ((big, samples[0]), (small, samples[1])):
            started = time.perf_counter()
            page = await store.page_before(SESSION)
            into.append(time.perf_counter() - started)
            assert page.rows
    return statistics.median(samples[0]), statistics.median(samples[1])


async def timed(run: Awaitable[object]) -> float:
    started = time.perf_counter()
    await run
    return time.perf_counter() - started


async def measure(turns: int, repeat: int) -> dict[str, Any]:
    work = realistic_stream(turns=turns)
    events = normalised(work)
    chunks = work.chunks + sum(1 for name, _ in events if name == "prompt")
    runs: dict[str, list[float]] = {
        "fold": [],
        "persisted": [],
        "ceiling": [],
        "insert": [],
        "naive": [],
    }
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        for index in range(repeat):
            started = time.perf_counter()
            fold_only(events)
            runs["fold"].append(time.perf_counter() - started)
            runs["persisted"].append(await timed(persisted(events, base / f"p{index}.db")))
            started = time.perf_counter()
            runs["insert"].append(await ceiling(events, base / f"c{index}.db"))
            runs["ceiling"].append(time.perf_counter() - started)
            runs["naive"].append(await timed(naive(events, base / f"n{index}.db")))
        ratio = await rows_per_message(events, work, base / "check.db")
        big = await build_session(base / "big.db", 100_000)
        small = await build_session(base / "small.db", 1_000)
        tail_big, tail_small = await tail_latencies(big, small, 200 * repeat)
        await big.close()
        await small.close()
    best = {name: min(values) for name, values in runs.items()}
    rate = {name: chunks / seconds for name, seconds in best.items() if name != "insert"}
    return {
        "chunks": chunks,
        "messages": len(work.messages),
        "fold_chunks_per_s": round(rate["fold"]),
        "persisted_chunks_per_s": round(rate["persisted"]),
        "ceiling_chunks_per_s": round(rate["ceiling"]),
        "ceiling_insert_only_ms": round(best["insert"] * 1000, 2),
        "naive_chunks_per_s": round(rate["naive"]),
        "persisted_vs_ceiling": round(rate["persisted"] / rate["ceiling"], 3),
        "persisted_vs_naive": round(rate["persisted"] / rate["naive"], 1),
        "rows_per_message": ratio,
        "tail_page_ms_100k": round(tail_big * 1000, 3),
        "tail_page_ms_1k": round(tail_small * 1000, 3),
        "tail_page_ratio_100k_vs_1k": round(tail_big / tail_small, 3),
    }


TARGETS = {
    "persisted_vs_ceiling": (">=", 0.5),
    "persisted_vs_naive": (">=", 20.0),
    "rows_per_message": ("==", 1.0),
    "tail_page_ratio_100k_vs_1k": ("<=", 1.5),
}


def verdicts(result: dict[str, Any]) -> dict[str, bool]:
    """Which targets the figures meet."""
    checks = {
        ">=": lambda value, goal: value >= goal,
        "<=": lambda value, goal: value <= goal,
        "==": lambda value, goal: value == goal,
    }
    return {name: checks[op](result[name], goal) for name, (op, goal) in TARGETS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.store", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--turns", type=int, default=30, help="turns in the stream (default 30)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="repetitions; best is kept (default 3)"
    )
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.turns, args.repeat))
    met = verdicts(result)
    if args.json:
        print(json.dumps({**result, "targets_met": met}, indent=2))
    else:
        width = max(map(len, result))
        for name, value in result.items():
            target = TARGETS.get(name)
            mark = (
                f"  target {target[0]} {target[1]}: {'met' if met[name] else 'MISSED'}"
                if target
                else ""
            )
            print(f"{name:<{width}}  {value}{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
