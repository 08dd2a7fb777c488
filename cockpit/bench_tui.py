"""The TUI benchmark: `python -m cockpit.bench_tui [--json]`, headless (`App.run_test`).

Measured in one run, each figure beside its baseline:

- streaming, end to end: a real demo agent streams the benchmark reply (10, 25 and 50 KB
  in 4-character chunks, as fast as it can) into the TUI; the CPU time of Cockpit's whole
  process (pipe, engine, store, screen) until the full text is on screen, against the same
  text written chunk by chunk into a bare Textual `Markdown` through `MarkdownStream`;
  and how each grows with the length;
- the worst case for the screen: the 50 KB reply as one engine event per chunk, the store
  work done beforehand, so only the UI is measured;
- eight sessions: eight real demo agents stream the reply at once (one on screen) while
  keys are typed into the composer; keypress-to-screen latency (the pilot waits until the
  screen has been updated), p50 and p95, and every transcript checked character for
  character;
- paging: a 10,000-message session scrolled from the tail to the first message and back,
  the most bubbles mounted at any time, and the peak RSS against a 100-message session
  (each in its own process);
- cold start: process start to first paint on a store of five sessions, against a bare
  Textual app.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cockpit.engine import Engine
from cockpit.events import FramesEvent
from cockpit.registry import load_registry
from store import Frame, chunk_from_update, note
from store.workload import BENCH_SIZE, benchmark_reply, markdown_reply, text_update

SIZE = (120, 40)


def _app(engine: Engine, folder: Path) -> Any:
    from cockpit.ui.app import CockpitApp

    return CockpitApp(
        engine,
        folder=folder,
        blink=False,
        settings_file=folder / "settings.json",
        themes_dir=folder / "themes",
    )


async def bare_markdown_stream(text: str) -> float:
    """CPU seconds to stream `text` in 4-character writes into a bare Markdown widget."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Markdown

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()

    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        markdown = app.query_one(Markdown)
        stream = Markdown.get_stream(markdown)
        started = time.process_time()
        for index in range(0, len(text), 4):
            await stream.write(text[index : index + 4])
        await stream.stop()
        await pilot.pause()
        return time.process_time() - started


async def cockpit_stream(text: str, folder: Path) -> float:
    """CPU seconds for Cockpit's transcript to take `text` as one engine event per chunk."""
    from cockpit.ui.app import EngineMessage
    from cockpit.ui.bubbles import AgentBubble
    from cockpit.ui.transcript import TranscriptView

    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    record = await engine.create_session("demo", folder)
    _, first = await engine.store.begin_turn(record.id, "bench")
    frames: list[Frame] = list(first)
    for index in range(0, len(text), 4):
        chunk = chunk_from_update(
            record.id, text_update("agent_message_chunk", text[index : index + 4])
        )
        frames += await engine.store.apply(chunk)
    await engine.store.end_turn(record.id)
    app = _app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await pilot.pause()
            view = app.query_one(TranscriptView)
            await view.show_session(record.id)  # an empty view, the frames rebuild it
            view.model = type(view.model)()
            await view.remove_children()
            view.widgets = {}
            started = time.process_time()
            for frame in frames:
                app.post_message(EngineMessage(FramesEvent(record.id, (frame,))))
                await asyncio.sleep(0)
            while not any(b.kind == "agent" and len(b.text) == len(text) for b in view.model):  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            await view.finish_live()
            await pilot.pause()
            elapsed = time.process_time() - started
            replies = [w.text for w in app.query(AgentBubble)]
            if replies != [text]:
                raise AssertionError("the transcript on screen differs from the text sent")
            return elapsed
    finally:
        await engine.close()


async def cockpit_end_to_end(size: int, folder: Path) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) for a real demo agent to stream the
    benchmark reply of `size` into the TUI: the pipe, the engine, the store and the screen,
    until the whole text is on screen."""
    from cockpit.ui.bubbles import AgentBubble

    text = benchmark_reply(size)
    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    record = await engine.create_session("demo", folder)
    await engine.start(record.id)
    app = _app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await app.switch_to(record.id)
            await pilot.pause()
            cpu, wall = time.process_time(), time.perf_counter()
            if await engine.prompt(record.id, f"bench {size}") != "end_turn":
                raise AssertionError("the benchmark turn did not end normally")
            while not [w for w in app.query(AgentBubble) if len(w.text) == len(text)]:  # noqa: ASYNC110
                await asyncio.sleep(0.001)
            await pilot.pause()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if [w.text for w in app.query(AgentBubble)] != [text]:
                raise AssertionError("the reply on screen differs from the text sent")
    finally:
        await engine.close()
    return cpu, wall


async def eight_sessions(folder: Path, presses: int = 60) -> dict[str, Any]:
    """Keypress latency while eight demo agents stream the benchmark reply at once."""
    from textual import events

    from cockpit.ui.composer import Composer
    from cockpit.ui.transcript import TranscriptView

    text = benchmark_reply(BENCH_SIZE)
    engine = await Engine.open(folder / "home8", registry=load_registry(folder / "config"))
    records = [await engine.create_session("demo", folder) for _ in range(8)]
    await asyncio.gather(*(engine.start(r.id) for r in records))
    app = _app(engine, folder)
    latencies: list[float] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await app.switch_to(records[0].id)
            composer = app.query_one(Composer)
            composer.focus()
            cpu = time.process_time()
            turns = [asyncio.create_task(engine.prompt(r.id, "bench")) for r in records]
            await asyncio.sleep(0.2)
            for number in range(presses):
                if all(turn.done() for turn in turns):
                    break
                key = "abcdefghij"[number % 10]
                before = composer.text
                started = time.perf_counter()
                app.post_message(events.Key(key, key))
                while composer.text == before:  # noqa: ASYNC110
                    await asyncio.sleep(0.0005)
                latencies.append(time.perf_counter() - started)
                await asyncio.sleep(0.05)
            reasons = await asyncio.gather(*turns)
            await pilot.pause()
            cpu = time.process_time() - cpu
            for record in records:
                rows = await engine.store.all_rows(record.id)
                if [r.text for r in rows if r.kind == "agent"] != [text]:
                    raise AssertionError("a stored transcript differs from what the agent sent")
            view = app.query_one(TranscriptView)
            await view.jump_to_end()
            shown = [b.text for b in view.model if b.kind == "agent"]
            if shown != [text]:
                raise AssertionError("the transcript on screen differs from what the agent sent")
    finally:
        await engine.close()
    return {
        "cpu_s": round(cpu, 2),
        "reasons": sorted(set(reasons)),
        "presses": len(latencies),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p95_ms": round(sorted(latencies)[max(int(len(latencies) * 0.95) - 1, 0)] * 1000, 1),
    }


async def paging_run(messages: int, folder: Path) -> dict[str, Any]:
    """Scroll a session of `messages` rows to the top and back; the most bubbles mounted
    and the peak RSS of this process."""
    from cockpit.ui.bubbles import BubbleWidget
    from cockpit.ui.transcript import TranscriptView

    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    record = await engine.create_session("demo", folder, title="long")
    reply = markdown_reply(random.Random(1), 400)
    for number in range(messages):
        if number % 2:
            await engine.store.apply(
                chunk_from_update(record.id, text_update("agent_message_chunk", reply))
            )
        await engine.store.apply(note(record.id, "notice", f"message {number}"))
    await engine.store.flush()
    app = _app(engine, folder)
    most = 0
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            view = app.query_one(TranscriptView)
            await pilot.pause()
            most = len(app.query(BubbleWidget))
            while view.more_before:
                view.scroll_home(animate=False, immediate=True)
                await view.load_earlier()
                await pilot.pause()
                most = max(most, len(app.query(BubbleWidget)))
            while view.detached:
                view.scroll_end(animate=False, immediate=True)
                await view.load_later()
                await pilot.pause()
                most = max(most, len(app.query(BubbleWidget)))
            at_end = len(app.query(BubbleWidget))
    finally:
        await engine.close()
    return {
        "messages": messages,
        "max_mounted": most,
        "mounted_at_end": at_end,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


async def first_paint(folder: Path, bare: bool) -> float:
    """Seconds from this process's start to the first paint (reported by the caller)."""
    if bare:
        from textual.app import App, ComposeResult
        from textual.widgets import Static

        class Bare(App[None]):
            def compose(self) -> ComposeResult:
                yield Static("hello")

        app: Any = Bare()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            return time.time()
    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    app = _app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await pilot.pause()
            return time.time()
    finally:
        await engine.close()


async def make_cold_store(folder: Path) -> None:
    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    for number in range(5):
        record = await engine.create_session("demo", folder, title=f"session {number}")
        await engine.store.begin_turn(record.id, "hello")
        await engine.store.apply(
            chunk_from_update(record.id, text_update("agent_message_chunk", "x" * 2000))
        )
        await engine.store.end_turn(record.id)
    await engine.close()


def child(args: list[str]) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; returns what it printed (JSON)."""
    result = subprocess.run(
        [sys.executable, "-m", "cockpit.bench_tui", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


SIZES = (10_000, 25_000, BENCH_SIZE)


def measure() -> dict[str, Any]:
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for size in SIZES:
            text = benchmark_reply(size)
            bare = min(asyncio.run(bare_markdown_stream(text)) for _ in range(2))
            ours = []
            for run in range(2):
                place = folder / f"e2e-{size}-{run}"
                place.mkdir()
                ours.append(asyncio.run(cockpit_end_to_end(size, place))[0])
            kb = round(size / 1000)
            result[f"stream_{kb}kb_bare_markdownstream_cpu_s"] = round(bare, 2)
            result[f"stream_{kb}kb_cockpit_end_to_end_cpu_s"] = round(min(ours), 2)
            result[f"stream_{kb}kb_ratio_cockpit_vs_bare"] = round(min(ours) / bare, 3)
        for name_ in ("bare_markdownstream", "cockpit_end_to_end"):
            small, middle, large = (
                result[f"stream_{round(s / 1000)}kb_{name_}_cpu_s"] for s in SIZES
            )
            result[f"growth_{name_}_25kb_vs_10kb"] = round(middle / small, 2)
            result[f"growth_{name_}_50kb_vs_25kb"] = round(large / middle, 2)
        text = benchmark_reply(BENCH_SIZE)
        worst = []
        for run in range(2):
            (folder / f"worst{run}").mkdir()
            worst.append(asyncio.run(cockpit_stream(text, folder / f"worst{run}")))
        result["worst_case_one_event_per_chunk_ui_cpu_s"] = round(min(worst), 2)
        result["worst_case_ratio_vs_bare"] = round(
            min(worst) / result["stream_50kb_bare_markdownstream_cpu_s"], 2
        )
        (folder / "eight").mkdir()
        eight = asyncio.run(eight_sessions(folder / "eight"))
        result["eight_sessions_cockpit_cpu_s"] = eight["cpu_s"]
        result["eight_sessions_cpu_per_session_vs_one"] = round(
            eight["cpu_s"] / 8 / result["stream_50kb_cockpit_end_to_end_cpu_s"], 2
        )
        result["eight_sessions_keypress_p50_ms"] = eight["p50_ms"]
        result["eight_sessions_keypress_p95_ms"] = eight["p95_ms"]
        result["eight_sessions_presses"] = eight["presses"]
        small = child(["--paging", "100"])
        big = child(["--paging", "10000"])
        result["paging_10k_max_mounted"] = big["max_mounted"]
        result["paging_100_max_mounted"] = small["max_mounted"]
        result["paging_rss_10k_mb"] = big["peak_rss_mb"]
        result["paging_rss_100_mb"] = small["peak_rss_mb"]
        result["paging_rss_ratio_10k_vs_100"] = round(big["peak_rss_mb"] / small["peak_rss_mb"], 3)
        (folder / "cold").mkdir()
        asyncio.run(make_cold_store(folder / "cold"))
        cold = min(child(["--first-paint", str(folder / "cold")])["seconds"] for _ in range(3))
        cold_bare = min(child(["--first-paint-bare"])["seconds"] for _ in range(3))
        result["cold_start_first_paint_s"] = round(cold, 2)
        result["cold_start_bare_textual_s"] = round(cold_bare, 2)
        result["cold_start_ratio"] = round(cold / cold_bare, 2)
    return result


TARGETS = {
    "stream_50kb_ratio_cockpit_vs_bare": 0.25,
    "worst_case_ratio_vs_bare": 2.0,
    "eight_sessions_keypress_p95_ms": 50.0,
    "paging_10k_max_mounted": 200,
    "paging_rss_ratio_10k_vs_100": 1.2,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cockpit.bench_tui", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--paging", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first-paint", help=argparse.SUPPRESS)
    parser.add_argument("--first-paint-bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.paging:
        with tempfile.TemporaryDirectory() as name:
            print(json.dumps(asyncio.run(paging_run(args.paging, Path(name)))))
        return 0
    if args.first_paint or args.first_paint_bare:
        painted = asyncio.run(
            first_paint(Path(args.first_paint or "."), bare=args.first_paint_bare)
        )
        print(json.dumps({"seconds": painted - _process_start()}))
        return 0
    result = measure()
    if args.json:
        print(
            json.dumps(
                {**result, "targets_met": {k: result[k] <= v for k, v in TARGETS.items()}}, indent=2
            )
        )
    else:
        width = max(map(len, result))
        for name, value in result.items():
            target = (
                f"  target <= {TARGETS[name]}: {'met' if value <= TARGETS[name] else 'MISSED'}"
                if name in TARGETS
                else ""
            )
            print(f"{name:<{width}}  {value}{target}")
    return 0


def _process_start() -> float:
    """When this process started (Linux), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    with open("/proc/self/stat") as stat:
        start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as uptime:
        up = float(uptime.read().split()[0])
    return time.time() - up + start_ticks / ticks


if __name__ == "__main__":
    raise SystemExit(main())
