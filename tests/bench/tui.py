"""The TUI benchmark: `python -m tests.bench.tui [--json] [--only PART]`, headless
(`App.run_test`).

Measured in one run, each figure beside its baseline:

- stream: a real demo agent streams the benchmark reply (10, 25 and 50 KB in
  4-character chunks, as fast as it can) into the TUI; the CPU time of Cockpit's whole
  process (pipe, engine, store, screen) until the full text is on screen, against the
  same text written chunk by chunk into a bare Textual `Markdown` through
  `MarkdownStream`; and how each grows with the length;
- worst: the worst case for the screen, the 50 KB reply as one engine event per chunk,
  the store work done beforehand, so only the UI is measured;
- paced: the same, UI only, at a model's pace (87 chunks a second) for a 10 KB reply,
  against the bare `MarkdownStream` written at the same pace: what a reply costs while
  it lasts, as a share of a core;
- long: the UI alone taking a 50 KB and an 800 KB reply the same way as `worst`, in
  three rounds (50, 800, 50 KB): CPU per KB at each size and their ratio (the cost of a
  frame must not grow with the reply), beside the plain view fold
  (`ViewTranscript.apply`) over the same frames;
- block: the same for a reply that is one open code block, 25 and 200 KB (the longest
  open block, rendered again at each repaint);
- eight: eight real demo agents stream the 50 KB reply at once (one on screen) while
  keys are typed into the composer, three times: keypress-to-screen latency (from
  posting the key to the first frame written with the composer repainted after the key
  took effect, read where the app writes frames), p50, p95 and the worst, pooled; the
  first press of each run (as the eight turns start) apart from those while the replies
  stream; and the latter less the time the app's thread waited for a CPU (the agents
  share the cores); beside them, the same with the agents at Cockpit's own CPU priority
  (`nice = 0`; by default they work ten steps below it), runs interleaved;
  Cockpit's CPU against eight times a bare `MarkdownStream` (each in its own app: eight
  of them in one app cost far more, about 237 s against 47 s in one run);
  every transcript checked in the store and on screen, each session shown in turn;
- background: eight sessions streaming with the UI showing a ninth, idle one, against
  the engine alone taking the same streams;
- paging: a 10,000-message session scrolled from the tail to the first message and
  back with PageUp and PageDown (real key events, every press checked to move the view),
  the most bubbles mounted at any time, and the peak RSS (`VmHWM`) against a 100-message
  session (each in its own process);
- cold: process start to first paint on a store of five sessions, against a bare
  Textual app.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.api import FramesEvent
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from store import Bubble, Frame, ViewTranscript, chunk_from_update, note
from store.workload import BENCH_MARKER, BENCH_SIZE, benchmark_reply, markdown_reply, text_update

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


async def paced(index: int, started: float, pace: float | None) -> None:
    """Wait until chunk number `index` is due at `pace` chunks a second (or just yield)."""
    if pace is None:
        await asyncio.sleep(0)
    else:
        await asyncio.sleep(max(started + index / pace - time.perf_counter(), 0))


async def bare_markdown_stream(text: str, pace: float | None = None) -> float:
    """CPU seconds to stream `text` in 4-character writes into a bare Markdown widget
    (as fast as it takes them, or `pace` writes a second)."""
    from textual.app import App, ComposeResult
    from textual.containers import VerticalScroll
    from textual.widgets import Markdown

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            with VerticalScroll():
                yield Markdown()

    app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        stream = Markdown.get_stream(app.query_one(Markdown))
        started, wall = time.process_time(), time.perf_counter()
        for number, index in enumerate(range(0, len(text), 4)):
            await stream.write(text[index : index + 4])  # each write yields
            if pace is not None:
                await paced(number + 1, wall, pace)
        await stream.stop()
        await pilot.pause()
        return time.process_time() - started


async def cockpit_stream(text: str, folder: Path, pace: float | None = None) -> float:
    """CPU seconds for Cockpit's transcript to take `text` as one engine event per chunk
    (as fast as it takes them, or `pace` events a second), the store work done
    beforehand: the UI alone."""
    return (await ui_stream(text, folder, pace))[0]


def plain_fold_cpu(frames: list[Frame]) -> float:
    """CPU seconds for the pure view fold alone (`ViewTranscript.apply`) to take `frames`:
    the floor under any view of them."""
    view = ViewTranscript()
    started = time.process_time()
    for frame in frames:
        view.apply(frame)
    return time.process_time() - started


async def ui_stream(text: str, folder: Path, pace: float | None = None) -> tuple[float, float]:
    """(UI CPU seconds, plain fold CPU seconds) for `text` streamed as one engine event per
    4-character chunk into Cockpit's transcript (see `cockpit_stream`), and the same
    frames taken by the plain fold, in this process just before."""
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
    folded = min(plain_fold_cpu(frames) for _ in range(3))
    # The frames stand for what would arrive over the pipe: the collector need not walk
    # them over and over while they wait (the app's own objects are frozen at its start).
    app = _app(engine, folder)
    gc.collect()
    gc.freeze()
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
            started, wall = time.process_time(), time.perf_counter()
            for number, frame in enumerate(frames):
                app.post_message(EngineMessage(FramesEvent(record.id, (frame,))))
                await paced(number + 1, wall, pace)
            while not any(b.kind == "agent" and b.length == len(text) for b in view.model):
                await asyncio.sleep(0.001)
            await view.finish_live()
            await pilot.pause()
            elapsed = time.process_time() - started
            replies = list(app.query(AgentBubble))
            if [w.text for w in replies] != [text]:
                raise AssertionError("the transcript on screen differs from the text sent")
            first_line, shown = screen_lines(app, replies[0])
            if shown != fresh_lines(replies[0], text)[first_line : first_line + len(shown)]:
                raise AssertionError("the lines on screen differ from a fresh rendering")
            return elapsed, folded
    finally:
        gc.unfreeze()
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
            while not [w for w in app.query(AgentBubble) if len(w.text) == len(text)]:
                await asyncio.sleep(0.001)
            await pilot.pause()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if [w.text for w in app.query(AgentBubble)] != [text]:
                raise AssertionError("the reply on screen differs from the text sent")
    finally:
        await engine.close()
    return cpu, wall


class FrameClock:
    """When the app writes frames, and whether each one painted a widget (it wraps
    `App._display`, which the screen calls with every update it has composed)."""

    def __init__(self, app: Any, widget: Any, probe: Any) -> None:
        self.app = app
        self.widget = widget
        self.probe = probe
        self.frames: list[tuple[float, bool, Any]] = []
        self._original = app._display
        app._display = self._display

    def _display(self, screen: Any, renderable: Any) -> None:
        self._original(screen, renderable)
        if renderable is None or self.app._batch_count:
            return
        self.frames.append((time.perf_counter(), self._covers(renderable), self.probe()))

    def _covers(self, update: Any) -> bool:
        """True when the update repaints (part of) the widget."""
        from textual._compositor import ChopsUpdate

        if not isinstance(update, ChopsUpdate):
            return True  # a full update
        region = self.widget.region
        return any(
            region.y <= y < region.bottom and x1 < region.right and x2 >= region.x
            for y, x1, x2 in update.spans
        )

    async def shown(self, since: int, value: Any) -> float:
        """When the first frame after frame number `since` painted the widget while the
        probe read `value` (waits for it, 10 s at most)."""
        deadline = time.perf_counter() + 10
        while True:
            for when, covers, probed in self.frames[since:]:
                if covers and probed == value:
                    return when
            if time.perf_counter() > deadline:
                raise TimeoutError("no frame showed the change")
            await asyncio.sleep(0.0005)


def run_queue_wait() -> float:
    """Seconds this thread has spent runnable but waiting for a CPU (Linux; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


async def eight_sessions(folder: Path, presses: int = 60) -> dict[str, Any]:
    """Keypress-to-screen latency while eight demo agents stream the benchmark reply at
    once, the first one on screen: from posting the key to the first frame written with
    the composer repainted after the key changed its text; for each press also how long
    the app's thread waited for a CPU meanwhile (the agents compete for the same cores).
    Then every transcript is checked, in the store and on screen (each session is shown
    in turn)."""
    from textual import events

    from cockpit.ui.composer import Composer

    text = benchmark_reply(BENCH_SIZE)
    engine = await Engine.open(folder / "home8", registry=load_registry(folder / "config"))
    records = [await engine.create_session("demo", folder) for _ in range(8)]
    await asyncio.gather(*(engine.start(r.id) for r in records))
    app = _app(engine, folder)
    latencies: list[float] = []
    waits: list[float] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await app.switch_to(records[0].id)
            composer = app.query_one(Composer)
            composer.focus()
            await pilot.pause()
            clock = FrameClock(app, composer, lambda: composer.text)
            cpu, wall = time.process_time(), time.perf_counter()
            turns = [asyncio.create_task(engine.prompt(r.id, "bench")) for r in records]
            await asyncio.sleep(0.2)
            for number in range(presses):
                if all(turn.done() for turn in turns):
                    break
                key = "abcdefghij"[number % 10]
                expected = composer.text + key
                since = len(clock.frames)
                started, waited = time.perf_counter(), run_queue_wait()
                app.post_message(events.Key(key, key))
                latencies.append(await clock.shown(since, expected) - started)
                waits.append(run_queue_wait() - waited)
                await asyncio.sleep(0.05)
            reasons = await asyncio.gather(*turns)
            await pilot.pause()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            for record in records:
                rows = await engine.store.all_rows(record.id)
                if [r.text for r in rows if r.kind == "agent"] != [text]:
                    raise AssertionError("a stored transcript differs from what the agent sent")
            await check_shown(app, pilot, records[0].id, text, streamed=True)
            for record in records[1:]:
                await check_shown(app, pilot, record.id, text)
    finally:
        await engine.close()
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "reasons": sorted(set(reasons)),
        "latencies_s": latencies,
        "run_queue_waits_s": waits,
    }


async def eight_streams_cpu(folder: Path, ui: bool) -> float:
    """CPU seconds of this process while eight demo agents stream the benchmark reply at
    once, with the UI showing a ninth, idle session (all eight in the background), or
    (`ui` false) with no UI at all: the engine alone."""
    from cockpit.ui.transcript import TranscriptView

    text = benchmark_reply(BENCH_SIZE)
    engine = await Engine.open(folder / "home", registry=load_registry(folder / "config"))
    shown = await engine.create_session("demo", folder, title="idle")
    records = [await engine.create_session("demo", folder) for _ in range(8)]
    await asyncio.gather(*(engine.start(r.id) for r in records))
    app = _app(engine, folder)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if ui:
                pilot = await stack.enter_async_context(app.run_test(size=SIZE))
                while app.current is None:
                    await pilot.pause()
                await app.switch_to(shown.id)
                await pilot.pause()
            cpu = time.process_time()
            await asyncio.gather(*(engine.prompt(r.id, "bench") for r in records))
            if ui:
                await pilot.pause()
                if len(app.query_one(TranscriptView).model):
                    raise AssertionError("a background session reached the idle one's view")
            cpu = time.process_time() - cpu
        for record in records:
            rows = await engine.store.all_rows(record.id)
            if [r.text for r in rows if r.kind == "agent"] != [text]:
                raise AssertionError("a stored transcript differs from what the agent sent")
    finally:
        await engine.close()
    return cpu


def percentiles(latencies: list[float]) -> dict[str, float]:
    """p50, p95 and the largest of `latencies` (seconds), in milliseconds."""
    ordered = sorted(latencies)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[max(math.ceil(len(ordered) * 0.95) - 1, 0)] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


async def check_shown(
    app: Any, pilot: Any, session: str, text: str, streamed: bool = False
) -> None:
    """Show `session` (unless it is the one that `streamed` on screen) and check that its
    reply is `text`: the bubble's text, and the lines the screen shows equal to those of
    a reply rendered fresh from the whole text; the marker line among them."""
    from cockpit.ui.bubbles import AgentBubble
    from cockpit.ui.transcript import TranscriptView

    view = app.query_one(TranscriptView)
    if not streamed:
        await app.switch_to(session)
    await view.jump_to_end()
    await pilot.pause()
    bubbles = list(app.query(AgentBubble))
    if [bubble.text for bubble in bubbles] != [text]:
        raise AssertionError(f"the reply shown for {session} differs from what the agent sent")
    first, shown = screen_lines(app, bubbles[0])
    fresh = fresh_lines(bubbles[0], text)
    if not shown or shown != fresh[first : first + len(shown)]:
        raise AssertionError(f"the lines on screen for {session} differ from a fresh rendering")
    if not any(BENCH_MARKER in line for line in shown):
        raise AssertionError(f"the marker line of {session} is not on screen")


def screen_lines(app: Any, widget: Any) -> tuple[int, list[str]]:
    """What the screen shows of `widget` right now, as it would be written to the terminal:
    (the widget's first line in view, the text of each of its lines in view, trailing
    spaces removed)."""
    _, clip = app.screen._compositor.visible_widgets[widget]
    content = widget.content_region
    strips = app.screen._compositor.render_strips()
    top, bottom = max(content.y, clip.y), min(content.bottom, clip.bottom)
    lines = [
        strips[y].crop(content.x, content.x + content.width).text.rstrip()
        for y in range(top, bottom)
    ]
    return top - content.y, lines


def fresh_lines(bubble: Any, text: str) -> list[str]:
    """`text` rendered by a new reply bubble at `bubble`'s width (never mounted)."""
    from cockpit.ui.bubbles import AgentBubble

    fresh = AgentBubble(Bubble(bubble.key, bubble.seq, "agent", 0, text))
    return [line.text.rstrip() for line in fresh.lines(bubble.content_size.width)]


async def paging_run(messages: int, folder: Path) -> dict[str, Any]:
    """Scroll a session of `messages` messages from the tail to the first message and back
    with the keys a user has (PageUp, then PageDown, the transcript focused; each press
    delivered as a key event and painted), checking that every press moves the view; the
    most bubbles mounted, the presses, and the peak RSS of this process."""
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
    newest = (await engine.store.latest_seqs())[record.id]
    app = _app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            view = app.query_one(TranscriptView)
            view.focus()
            await pilot.pause()
            most = len(app.query(BubbleWidget))
            up, most_up = await press_until(
                pilot, view, "pageup", lambda: not view.more_before and view.scroll_y == 0
            )
            if view.mounted_seqs()[0] != 1:
                raise AssertionError("PageUp did not reach the first message")
            down, most_down = await press_until(
                pilot, view, "pagedown", lambda: not view.detached and view.at_bottom
            )
            if view.mounted_seqs()[-1] != newest:
                raise AssertionError("PageDown did not come back to the newest message")
            at_end = len(app.query(BubbleWidget))
    finally:
        await engine.close()
    return {
        "messages": messages,
        "presses_up": up,
        "presses_down": down,
        "max_mounted": max(most, most_up, most_down),
        "mounted_at_end": at_end,
        "peak_rss_mb": peak_rss_mb(),
    }


def peak_rss_mb() -> float:
    """This process's peak RSS in MB: the high-water mark of its own memory (`VmHWM`).
    Not `getrusage`: Linux carries a parent's peak into a child across fork and exec, so
    a child started by the benchmark (after its streaming parts) reported the parent's
    peak, the same for both sizes."""
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def press_until(
    pilot: Any, view: Any, key: str, done: Any, stuck: int = 3
) -> tuple[int, int]:
    """Press `key` (a real key event, through the bindings) until `done()`, waiting after
    each press for the pages it loads and for the screen; (presses, most bubbles mounted).
    Raises when `stuck` presses in a row leave the view where it was."""
    from cockpit.ui.bubbles import BubbleWidget

    presses = most = still = 0
    where = (view.mounted_seqs()[0], view.scroll_y)
    while not done():
        await pilot.press(key)
        while view._loading:
            await pilot.pause()
        await pilot.pause()
        presses += 1
        most = max(most, len(pilot.app.query(BubbleWidget)))
        now = (view.mounted_seqs()[0], view.scroll_y)
        still = still + 1 if now == where else 0
        where = now
        if still >= stuck:
            raise AssertionError(f"{key} is stuck: {presses} presses, first row {now[0]}")
    return presses, most


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
        [sys.executable, "-m", "tests.bench.tui", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


SIZES = (10_000, 25_000, BENCH_SIZE)


PACE = 87.0
"""Chunks a second at a model's pace (4-character chunks: about 350 characters a second)."""

PACED_SIZE = 10_000
"""The reply streamed at PACE (2,500 chunks, about 29 seconds)."""

LONG_SIZES = (50_000, 800_000)
"""The replies of the long-reply measurement: the bound is on CPU per KB at the second
against the first."""

BLOCK_SIZES = (25_000, 200_000)
"""The one-code-block replies: the same bound, for the longest open block."""

PARTS = ("stream", "worst", "paced", "long", "block", "eight", "background", "paging", "cold")


def measure(parts: tuple[str, ...] = PARTS) -> dict[str, Any]:
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if "stream" in parts:
            result.update(measure_streams(folder))
        text = benchmark_reply(BENCH_SIZE)
        bare_50kb: list[float] = []
        if "worst" in parts:
            bare_50kb.append(asyncio.run(bare_markdown_stream(text)))
            worst = []
            for run in range(2):
                (folder / f"worst{run}").mkdir()
                worst.append(asyncio.run(cockpit_stream(text, folder / f"worst{run}")))
            bare_50kb.append(asyncio.run(bare_markdown_stream(text)))
            result["worst_case_one_event_per_chunk_ui_cpu_s"] = round(min(worst), 2)
            result["worst_case_bare_markdownstream_cpu_s"] = round(min(bare_50kb), 2)
            result["worst_case_ratio_vs_bare"] = round(min(worst) / min(bare_50kb), 3)
        if "paced" in parts:
            result.update(measure_paced(folder))
        if "long" in parts:
            result.update(measure_long(folder))
        if "block" in parts:
            result.update(measure_block(folder))
        if "eight" in parts:
            result.update(measure_eight(folder))
        if "background" in parts:
            result.update(measure_background(folder))
        if "paging" in parts:
            small = child(["--paging", "100"])
            big = child(["--paging", "10000"])
            result["paging_10k_max_mounted"] = big["max_mounted"]
            result["paging_100_max_mounted"] = small["max_mounted"]
            result["paging_10k_pageup_pagedown_presses"] = big["presses_up"] + big["presses_down"]
            result["paging_rss_10k_mb"] = big["peak_rss_mb"]
            result["paging_rss_100_mb"] = small["peak_rss_mb"]
            result["paging_rss_ratio_10k_vs_100"] = round(
                big["peak_rss_mb"] / small["peak_rss_mb"], 3
            )
        if "cold" in parts:
            (folder / "cold").mkdir()
            asyncio.run(make_cold_store(folder / "cold"))
            cold = min(child(["--first-paint", str(folder / "cold")])["seconds"] for _ in range(3))
            cold_bare = min(child(["--first-paint-bare"])["seconds"] for _ in range(3))
            result["cold_start_first_paint_s"] = round(cold, 2)
            result["cold_start_bare_textual_s"] = round(cold_bare, 2)
            result["cold_start_ratio"] = round(cold / cold_bare, 2)
    return result


def measure_streams(folder: Path) -> dict[str, Any]:
    """One session end to end for 10, 25 and 50 KB against the bare MarkdownStream."""
    result: dict[str, Any] = {}
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
    for name in ("bare_markdownstream", "cockpit_end_to_end"):
        small, middle, large = (result[f"stream_{round(s / 1000)}kb_{name}_cpu_s"] for s in SIZES)
        result[f"growth_{name}_25kb_vs_10kb"] = round(middle / small, 2)
        result[f"growth_{name}_50kb_vs_25kb"] = round(large / middle, 2)
    return result


def measure_paced(folder: Path) -> dict[str, Any]:
    """The UI alone at a model's pace: PACED_SIZE characters as one engine event per chunk,
    PACE chunks a second, against the bare MarkdownStream written at the same pace. The
    cost of a reply that lasts, not of a burst."""
    text = benchmark_reply(PACED_SIZE)
    seconds = math.ceil(len(text) / 4) / PACE
    (folder / "paced").mkdir()
    ours = asyncio.run(cockpit_stream(text, folder / "paced", pace=PACE))
    bare = asyncio.run(bare_markdown_stream(text, pace=PACE))
    kb = round(PACED_SIZE / 1000)
    return {
        f"paced_{kb}kb_at_{PACE:g}_chunks_per_s_stream_s": round(seconds, 1),
        f"paced_{kb}kb_cockpit_ui_cpu_s": round(ours, 2),
        f"paced_{kb}kb_bare_markdownstream_cpu_s": round(bare, 2),
        f"paced_{kb}kb_cockpit_ui_share_of_a_core": round(ours / seconds, 3),
        f"paced_{kb}kb_bare_share_of_a_core": round(bare / seconds, 3),
        f"paced_{kb}kb_ratio_cockpit_vs_bare": round(ours / bare, 3),
    }


def measure_long(folder: Path, rounds: int = 3) -> dict[str, Any]:
    """The UI alone taking a 50 KB and an 800 KB benchmark reply, one engine event per
    4-character chunk: CPU per KB at both sizes and their ratio, beside the plain fold's
    CPU per KB on the same frames. A view whose cost per frame grew with the text it holds
    would show here as a ratio well above 1."""
    return paired_per_kb("long", benchmark_reply, LONG_SIZES, folder, rounds)


def code_block_reply(size: int) -> str:
    """A reply of `size` characters that is one fenced code block, still open at the end
    of the stream: the longest open block there can be, rendered again at each repaint."""
    line = "    total = compute(first, second) + other_value  # a line of code\n"
    return ("```python\n" + line * (size // len(line) + 1))[:size]


def measure_block(folder: Path, rounds: int = 2) -> dict[str, Any]:
    """The same for one open code block of 25 KB and of 200 KB: the repaints' rendering of
    an open block grows with it, and must not make the reply cost the square of its
    length."""
    return paired_per_kb("block", code_block_reply, BLOCK_SIZES, folder, rounds)


def paired_per_kb(
    name: str, reply: Callable[[int], str], sizes: tuple[int, int], folder: Path, rounds: int
) -> dict[str, Any]:
    """CPU per KB of the UI taking `reply(size)` at two sizes, and the plain fold's. Each
    round runs the small reply, the large one, and the small one again, and its ratio is
    the large reply's CPU per KB against its two neighbours', so that a machine whose load
    drifts weighs on both sides alike; the figure is the median of the rounds' ratios (the
    ratio of the best runs is printed too: with twice as many small runs, it leans high)."""
    small, large = sizes
    ui: dict[int, list[float]] = {size: [] for size in sizes}
    fold: dict[int, list[float]] = {size: [] for size in sizes}
    paired: list[float] = []
    for run in range(rounds):
        for step, size in enumerate((small, large, small)):
            place = folder / f"{name}-{size}-{run}-{step}"
            place.mkdir()
            cpu, folded = asyncio.run(ui_stream(reply(size), place))
            ui[size].append(cpu / size)
            fold[size].append(folded / size)
        paired.append(ui[large][-1] / statistics.mean(ui[small][-2:]))
    result: dict[str, Any] = {}
    for size in sizes:
        kb = round(size / 1000)
        result[f"{name}_{kb}kb_ui_cpu_s"] = round(min(ui[size]) * size, 2)
        result[f"{name}_{kb}kb_ui_cpu_ms_per_kb"] = round(min(ui[size]) * 1e6, 2)
        result[f"{name}_{kb}kb_plain_fold_cpu_ms_per_kb"] = round(min(fold[size]) * 1e6, 3)
    versus = f"{round(large / 1000)}kb_vs_{round(small / 1000)}kb"
    result[f"{name}_ui_per_kb_ratio_{versus}"] = round(statistics.median(paired), 3)
    result[f"{name}_ui_per_kb_ratio_{versus}_each_round"] = [round(x, 3) for x in paired]
    result[f"{name}_ui_per_kb_ratio_{versus}_of_the_bests"] = round(
        min(ui[large]) / min(ui[small]), 3
    )
    result[f"{name}_plain_fold_per_kb_ratio_{versus}"] = round(
        min(fold[large]) / min(fold[small]), 3
    )
    return result


def measure_eight(folder: Path, runs: int = 3) -> dict[str, Any]:
    """Eight sessions at once, `runs` times; the key presses of all runs pooled, and
    apart: the first press of each run (typed 0.2 s after the eight prompts, while the
    turns start) and the presses while the replies stream. Beside them, the same with the
    agents at Cockpit's own CPU priority (`nice = 0`), runs interleaved."""
    ours: list[dict[str, Any]] = []
    level: list[dict[str, Any]] = []
    for run in range(runs):
        ours.append(eight_run(folder / f"eight{run}"))
        level.append(eight_run(folder / f"eight-level{run}", agent_nice=0))
    one = min(asyncio.run(bare_markdown_stream(benchmark_reply(BENCH_SIZE))) for _ in range(2))
    cpu = min(run["cpu_s"] for run in ours)
    return {
        "eight_sessions_cockpit_cpu_s": round(cpu, 2),
        "eight_sessions_bare_8x_markdownstream_cpu_s": round(8 * one, 2),
        "eight_sessions_ratio_cockpit_vs_bare": round(cpu / (8 * one), 3),
        **keypress_figures("eight_sessions", ours),
        **keypress_figures("eight_sessions_agents_at_cockpit_priority", level),
    }


def eight_run(folder: Path, agent_nice: int | None = None) -> dict[str, Any]:
    """One eight-session run in `folder`; `agent_nice` overrides the demo agent's entry."""
    folder.mkdir()
    if agent_nice is not None:
        (folder / "config").mkdir()
        (folder / "config" / "agents.toml").write_text(f"[agents.demo]\nnice = {agent_nice}\n")
    return asyncio.run(eight_sessions(folder))


def keypress_figures(prefix: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Keypress latency of several eight-session runs: every press pooled, the first
    press of each run, the presses while the replies stream, and those less the time the
    app's thread waited for a CPU."""
    latencies = [x for run in runs for x in run["latencies_s"]]
    first = [run["latencies_s"][0] for run in runs if run["latencies_s"]]
    streaming = [x for run in runs for x in run["latencies_s"][1:]]
    own = [
        latency - wait
        for run in runs
        for latency, wait in zip(run["latencies_s"][1:], run["run_queue_waits_s"][1:], strict=True)
    ]
    return {
        f"{prefix}_presses": len(latencies),
        **{f"{prefix}_keypress_{k}": v for k, v in percentiles(latencies).items()},
        f"{prefix}_keypress_at_turn_start_ms": [round(x * 1000) for x in first],
        **{f"{prefix}_keypress_streaming_{k}": v for k, v in percentiles(streaming).items()},
        **{
            f"{prefix}_keypress_streaming_less_cpu_wait_{k}": v for k, v in percentiles(own).items()
        },
    }


def measure_background(folder: Path, runs: int = 2) -> dict[str, Any]:
    """Eight sessions streaming in the background with the UI running, against the
    engine alone taking the same eight streams (runs interleaved, best of each)."""
    ui: list[float] = []
    engine: list[float] = []
    for run in range(runs):
        for place, times, with_ui in (("bg", ui, True), ("engine", engine, False)):
            (folder / f"{place}{run}").mkdir()
            times.append(asyncio.run(eight_streams_cpu(folder / f"{place}{run}", with_ui)))
    return {
        "eight_background_with_ui_cpu_s": round(min(ui), 2),
        "eight_background_engine_only_cpu_s": round(min(engine), 2),
        "eight_background_ratio_ui_vs_engine_only": round(min(ui) / min(engine), 3),
    }


TARGETS = {
    "stream_50kb_ratio_cockpit_vs_bare": 0.25,
    "worst_case_ratio_vs_bare": 2.0,
    "long_ui_per_kb_ratio_800kb_vs_50kb": 1.2,
    "block_ui_per_kb_ratio_200kb_vs_25kb": 1.2,
    "eight_sessions_keypress_p95_ms": 50.0,
    "eight_sessions_ratio_cockpit_vs_bare": 0.25,
    "paging_10k_max_mounted": 200,
    "paging_rss_ratio_10k_vs_100": 1.2,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.tui", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--only",
        action="append",
        choices=PARTS,
        help="measure only this part (repeatable); all of them by default",
    )
    parser.add_argument(
        "--no-freeze",
        action="store_true",
        help="leave the objects of the imports to the garbage collector (as before)",
    )
    parser.add_argument("--paging", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first-paint", help=argparse.SUPPRESS)
    parser.add_argument("--first-paint-bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.no_freeze:
        from cockpit.ui.app import freeze_startup_objects

        freeze_startup_objects()  # as `cockpit` does before its app runs
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
    result = measure(tuple(args.only or PARTS))
    if args.json:
        met = {k: result[k] <= v for k, v in TARGETS.items() if k in result}
        print(json.dumps({**result, "targets_met": met}, indent=2))
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
