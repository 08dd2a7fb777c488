"""The runs the TUI benchmark (`python -m tests.bench.tui`) measures, each in this
process: Cockpit's app and a bare Textual app streaming replies, keys typed while eight
agents stream, a long session paged with the keys, the first paint; and the probes that
check what they put on screen against the text sent (`screen_lines`, `fresh_lines`).
`tests.bench.tui` runs them, against their baselines, and reports."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
import resource
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI, FramesEvent
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from store import Bubble, Frame, ViewTranscript, chunk_from_update, note
from store.workload import BENCH_MARKER, BENCH_SIZE, benchmark_reply, markdown_reply, text_update


async def wait_for(condition: Callable[[], object], timeout: float, what: str) -> None:
    """Poll `condition` until it holds (TimeoutError naming `what` after `timeout`)."""
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"waited {timeout:g} s in vain for {what}")
        await asyncio.sleep(0.001)


async def show(app: Any, session: str) -> None:
    """Choose `session` as a user does, and wait until its transcript is read."""
    from cockpit.ui.transcript import TranscriptView

    await wait_for(lambda: session in app.records, 30, "the app to know the session")
    app.select_session(session)
    view = app.query_one(TranscriptView)
    await wait_for(lambda: view.session == session and view._busy is None, 30, "the session")


SIZE = (120, 40)


def make_app(engine: EngineAPI, folder: Path) -> Any:
    """The app on `engine` with its settings and themes in `folder` (no cursor blink: a
    blink would redraw between measurements)."""
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
    app = make_app(engine, folder)
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
                app.engine_listener(FramesEvent(record.id, (frame,)))
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
    app = make_app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await show(app, record.id)
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
    """When the app writes frames, and whether each one painted a widget (told of every
    update the screen composed as the app writes it: `on_screen_update`)."""

    def __init__(self, app: Any, widget: Any, probe: Any) -> None:
        from cockpit.compat.textual_private import on_screen_update

        self.app = app
        self.widget = widget
        self.probe = probe
        self.frames: list[tuple[float, bool, Any]] = []
        on_screen_update(app, self._written)

    def _written(self, update: object) -> None:
        self.frames.append((time.perf_counter(), self._covers(update), self.probe()))

    def _covers(self, update: object) -> bool:
        """True when the update repaints (part of) the widget."""
        from cockpit.compat.textual_private import update_spans

        spans = update_spans(update)
        if spans is None:
            return True  # a full update
        region = self.widget.region
        return any(
            region.y <= y < region.bottom and x1 < region.right and x2 >= region.x
            for y, x1, x2 in spans
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


async def keys_while_streaming(
    app: Any, composer: Any, turns: list[Callable[[], Awaitable[str]]], presses: int
) -> tuple[list[float], list[float], list[str]]:
    """Start `turns` (each streams a reply), then type a key into `composer` every 50 ms
    until they end or `presses` keys were typed: for each key the time from posting it to
    the first frame that shows it, and how long the app's thread waited for a CPU
    meanwhile; then each turn's stop reason."""
    from textual import events

    clock = FrameClock(app, composer, lambda: composer.text)
    running = [asyncio.ensure_future(turn()) for turn in turns]
    await asyncio.sleep(0.2)
    latencies: list[float] = []
    waits: list[float] = []
    for number in range(presses):
        if all(turn.done() for turn in running):
            break
        key = "abcdefghij"[number % 10]
        expected = composer.text + key
        since = len(clock.frames)
        started, waited = time.perf_counter(), run_queue_wait()
        app.post_message(events.Key(key, key))
        latencies.append(await clock.shown(since, expected) - started)
        waits.append(run_queue_wait() - waited)
        await asyncio.sleep(0.05)
    return latencies, waits, list(await asyncio.gather(*running))


async def eight_sessions(folder: Path, presses: int = 60) -> dict[str, Any]:
    """Keypress-to-screen latency while eight demo agents stream the benchmark reply at
    once, the first one on screen: from posting the key to the first frame written with
    the composer repainted after the key changed its text; for each press also how long
    the app's thread waited for a CPU meanwhile (the agents compete for the same cores).
    Then every transcript is checked, in the store and on screen (each session is shown
    in turn)."""
    from cockpit.ui.composer import Composer

    text = benchmark_reply(BENCH_SIZE)
    engine = await Engine.open(folder / "home8", registry=load_registry(folder / "config"))
    records = [await engine.create_session("demo", folder) for _ in range(8)]
    await asyncio.gather(*(engine.start(r.id) for r in records))
    app = make_app(engine, folder)
    try:
        async with app.run_test(size=SIZE) as pilot:
            while app.current is None:
                await pilot.pause()
            await show(app, records[0].id)
            composer = app.query_one(Composer)
            composer.focus()
            await pilot.pause()
            cpu, wall = time.process_time(), time.perf_counter()
            latencies, waits, reasons = await keys_while_streaming(
                app, composer, [partial(engine.prompt, r.id, "bench") for r in records], presses
            )
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
    app = make_app(engine, folder)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if ui:
                pilot = await stack.enter_async_context(app.run_test(size=SIZE))
                while app.current is None:
                    await pilot.pause()
                await show(app, shown.id)
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
        await show(app, session)
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
    from cockpit.compat.textual_private import screen_strips, visible_clip

    clip = visible_clip(app.screen, widget)
    content = widget.content_region
    strips = screen_strips(app.screen)
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
    app = make_app(engine, folder)
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
    app = make_app(engine, folder)
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
