"""The app's start, with its key bar against Textual's: `python -m tests.bench.app_start
[--apps N]`.

Opens the TUI headless at 80x24 on a fresh store (in-process engine, no agent), waits
until it has settled, presses Tab twice (composer to transcript to rail) and closes it.
Side by side in one run, alternating, N apps each: with Cockpit's key bar
(`cockpit.ui.footer.KeyFooter`, rebuilt only when the keys it shows change) and with
Textual's `Footer` (rebuilt on every bindings signal). Prints the CPU seconds per app of
each, their ratio, and how many times each rebuilt its keys per app.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from textual.widget import Widget
from textual.widgets import Footer

import cockpit.ui.app as app_module
from cockpit.ui.footer import KeyFooter
from tests.support.ui_helpers import make_app

REBUILDS = {"count": 0}


async def one_app(folder: Path, footer: type[Footer]) -> tuple[float, int]:
    """CPU seconds of one app's life with this key bar, and its rebuilds."""
    vars(app_module)["KeyFooter"] = footer  # the name the app's compose yields
    folder.mkdir(parents=True)
    REBUILDS["count"] = 0
    started = time.process_time()
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        await pilot.pause()
        await pilot.press("tab")
        await pilot.pause()
    return time.process_time() - started, REBUILDS["count"]


def count_rebuilds() -> None:
    """Count `Footer.recompose` calls, for either key bar."""
    recompose = Footer.recompose

    async def counted(self: Widget) -> None:
        REBUILDS["count"] += 1
        await recompose(self)

    Footer.recompose = counted  # type: ignore[method-assign]  # a bench's probe


async def main(apps: int) -> None:
    count_rebuilds()
    os.environ.setdefault("COCKPIT_LOCAL", "1")
    base = Path(tempfile.mkdtemp(prefix="cockpit-bench-start-"))
    os.environ["COCKPIT_HOME"] = str(base / "home")
    await one_app(base / "warm", KeyFooter)
    results: dict[str, list[tuple[float, int]]] = {"KeyFooter": [], "Footer": []}
    for index in range(apps):
        for name, footer in (("KeyFooter", KeyFooter), ("Footer", Footer)):
            results[name].append(await one_app(base / f"{name}-{index}", footer))
    vars(app_module)["KeyFooter"] = KeyFooter
    cpu = {name: statistics.median(c for c, _ in runs) for name, runs in results.items()}
    for name, runs in results.items():
        rebuilds = statistics.median(r for _, r in runs)
        print(
            f"{name:>9}: {cpu[name] * 1000:6.1f} ms CPU per app (median of {apps}), "
            f"{rebuilds:.0f} key bar rebuilds"
        )
    print(f"ratio KeyFooter / Footer: {cpu['KeyFooter'] / cpu['Footer']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apps", type=int, default=20)
    asyncio.run(main(parser.parse_args().apps))
