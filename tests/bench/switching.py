"""Switching sessions, with finished Markdown blocks kept against rendered every time:
`python -m tests.bench.switching [--switches N]`.

Four stored sessions, each with three turns whose replies are 4 KB of the benchmark's
Markdown (headings, tables, code, lists), open in the TUI headless at 80x24 (in-process
engine, no agent). Ctrl+Down walks the rail N times round them, waiting after each until
the transcript shows the session's replies. Side by side in one run, alternating: with
Cockpit's cache of rendered blocks (`cockpit.ui.markdown_lines.finished_markdown`) and
with every block rendered anew (`render_markdown` in its place, as before the cache).
Prints the CPU milliseconds per switch of each and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cockpit.ui.bubbles as bubbles
from cockpit.engine.core import Engine
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.markdown_lines import finished_markdown, render_markdown
from cockpit.ui.transcript import TranscriptView
from store.workload import benchmark_reply
from tests.support.ui_helpers import add_session, fill, make_app, wait_until

SESSIONS = 4
TURNS = 3
REPLY_SIZE = 4_000


async def stored(folder: Path) -> None:
    """The sessions the app opens on."""
    project = folder / "project"
    project.mkdir(parents=True)

    async def build(engine: Engine) -> None:
        for number in range(SESSIONS):
            turns = [
                (f"question {number}.{t}", benchmark_reply(REPLY_SIZE, seed=number * TURNS + t))
                for t in range(TURNS)
            ]
            await add_session(engine, project, f"session {number}", turns)

    await fill(folder / "home", build)


async def switches(folder: Path, count: int, renderer: Callable[..., Any]) -> float:
    """CPU seconds per switch of `count` Ctrl+Down presses, blocks rendered by `renderer`."""
    vars(bubbles)["finished_markdown"] = renderer  # the name the bubble calls
    app = make_app(folder, folder / "project")
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await wait_until(lambda: len(app.query(AgentBubble)) == TURNS, what="the first session")
        started = time.process_time()
        for _ in range(count):
            shown = view.session

            def moved(shown: str | None = shown) -> bool:
                return view.session != shown

            await pilot.press("ctrl+down")
            await wait_until(moved, what="the next session")
            await wait_until(lambda: len(app.query(AgentBubble)) == TURNS, what="its replies")
            await pilot.pause()
        cpu = time.process_time() - started
    vars(bubbles)["finished_markdown"] = finished_markdown
    return cpu / count


async def main(count: int) -> None:
    os.environ.setdefault("COCKPIT_LOCAL", "1")
    base = Path(tempfile.mkdtemp(prefix="cockpit-bench-switching-"))
    os.environ["COCKPIT_HOME"] = str(base / "home")
    await stored(base)
    await switches(base, 2, finished_markdown)  # warm
    runs: dict[str, list[float]] = {"kept": [], "rendered": []}
    for _ in range(3):
        runs["kept"].append(await switches(base, count, finished_markdown))
        runs["rendered"].append(await switches(base, count, render_markdown))
    best = {name: min(values) for name, values in runs.items()}
    for name, value in best.items():
        print(f"{name:>9}: {value * 1000:6.1f} ms CPU per switch (best of 3 runs of {count})")
    print(f"ratio kept / rendered: {best['kept'] / best['rendered']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--switches", type=int, default=24)
    asyncio.run(main(parser.parse_args().switches))
