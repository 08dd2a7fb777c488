"""The runs the service's benchmarks measure, each against an engine given to it: the one
in this process (`Engine`, the baseline) or a client of a service (`RemoteEngine`), so
both sides go through the same code. The TUI runs headless (`App.run_test`) in this
process; the service, when there is one, in its own, and its CPU is read from /proc."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from cockpit.api import EngineAPI, FramesEvent, Status
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from store.workload import BENCH_SIZE, benchmark_reply
from tests.bench.tui_runs import SIZE, make_app, show, wait_for

CpuClock = Callable[[], float]
"""The CPU seconds of what a run measures besides this process (the service's), or 0."""


def no_other_cpu() -> float:
    return 0.0


async def local_engine(home: Path) -> Engine:
    """The engine in this process, on the store in `home` (the baseline)."""
    return await Engine.open(home, registry=load_registry(home / "config"))


async def tui_stream_cpu(
    engine: EngineAPI, folder: Path, other_cpu: CpuClock, size: int = BENCH_SIZE
) -> float:
    """CPU seconds, this process's and `other_cpu`'s, for a real demo agent to stream the
    benchmark reply into the TUI showing its session, from the prompt until the whole text
    is on screen."""
    from cockpit.ui.bubbles import AgentBubble

    text = benchmark_reply(size)
    record = await engine.create_session("demo", folder)
    await engine.start(record.id)
    app = make_app(engine, folder)
    async with app.run_test(size=SIZE) as pilot:
        await show(app, record.id)
        await pilot.pause()
        started = time.process_time() + other_cpu()
        if await engine.prompt(record.id, f"bench {size}") != "end_turn":
            raise AssertionError("the benchmark turn did not end normally")
        await wait_for(
            lambda: any(len(w.text) == len(text) for w in app.query(AgentBubble)),
            60,
            "the whole reply on screen",
        )
        await pilot.pause()
        cpu = time.process_time() + other_cpu() - started
        if [w.text for w in app.query(AgentBubble)] != [text]:
            raise AssertionError("the reply on screen differs from the text sent")
    return cpu


async def bare_client_cpu(
    engine: EngineAPI, folder: Path, other_cpu: CpuClock, size: int = BENCH_SIZE
) -> tuple[float, int]:
    """CPU seconds, this process's and `other_cpu`'s, for a client that shows the session
    and renders nothing (it counts the frames and drops them) to take the same stream;
    and the frames it took."""
    record = await engine.create_session("demo", folder)
    await engine.start(record.id)
    frames = 0

    def count(event: object) -> None:
        nonlocal frames
        if isinstance(event, FramesEvent):
            frames += len(event.frames)

    unsubscribe = engine.subscribe(count)
    engine.show(record.id)
    await engine.page(record.id)  # the show has reached the service
    started = time.process_time() + other_cpu()
    if await engine.prompt(record.id, f"bench {size}") != "end_turn":
        raise AssertionError("the benchmark turn did not end normally")
    await wait_for(lambda: engine.status(record.id) == Status.READY, 30, "the turn's end")
    cpu = time.process_time() + other_cpu() - started
    unsubscribe()
    rows = await engine.rows(record.id)
    if [row.text for row in rows if row.kind == "agent"] != [benchmark_reply(size)]:
        raise AssertionError("the stored reply differs from the text sent")
    return cpu, frames
