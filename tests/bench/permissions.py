"""The permission-burst benchmark: `python -m tests.bench.permissions [--json]
[--sizes 200,1000] [--runs N]`, headless (`App.run_test`), from a source checkout.

A real agent subprocess (`tests/support/tiny_agent.py`, prompt word `ask-many n=N`) asks N
permissions at once in one turn and waits for every answer. Each size runs in a fresh
interpreter (so its peak memory is its own), through the whole TUI:

- take: from the Enter that sends the prompt until the engine holds all N requests and
  the screen shows them (the status line counts N, the session's prompt too when it
  counts, and the card of the newest tool call asked about is in the transcript); the
  wall time and Cockpit's own CPU time (the agent is another process), and when the
  engine held them all;
- keys in the burst: as soon as the first request is shown, Ctrl+B hides the rail and
  shows it again: how long the slower of the two keys waited, and how many requests had
  come by then;
- answer: key 1 on the request shown, until the next one is shown in its place;
- cancel: Esc in the composer, until the turn has ended and every request has its
  decision row in the store;
- the most PermissionPrompt widgets mounted at once, the widgets on screen after the take,
  and the peak RSS (`VmHWM`) of the process.

The figure that matters is the ratio of the take at the largest size to the take at the
smallest, beside the ratio of the sizes (5 for 1,000 against 200): linear when they are
close, with the time per request side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.api import Status
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry

SIZE = (120, 40)
SIZES = (200, 1000)
POLL = 0.01
TIMEOUT = 900.0
"""Seconds any one wait may take (the TUI before this benchmark took 110-130 s for 1,000)."""

TINY = Path(__file__).resolve().parents[1] / "support" / "tiny_agent.py"


async def until(condition: Callable[[], bool], limit: float = TIMEOUT) -> None:
    """Poll `condition` (the app's state changes between its messages; nothing to await)."""
    async with asyncio.timeout(limit):
        while not condition():
            await asyncio.sleep(POLL)


def kb(field: str) -> float:
    """A memory figure of this process from /proc, in MB (`VmHWM`: its peak)."""
    with contextlib.suppress(OSError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def burst(count: int, folder: Path) -> dict[str, Any]:
    """One run: N requests at once, taken, one answered, the rest cancelled."""
    from textual import events

    from cockpit.ui.app import CockpitApp
    from cockpit.ui.composer import Composer
    from cockpit.ui.rail import SessionRail
    from cockpit.ui.status_line import StatusLine
    from cockpit.ui.transcript import TranscriptView

    config = folder / "config"
    config.mkdir(parents=True)
    (config / "agents.toml").write_text(
        f'[agents.tiny]\ncommand = ["{sys.executable}", "{TINY}"]\n'
    )
    engine = await Engine.open(folder / "home", registry=load_registry(config))
    app = CockpitApp(
        engine,
        folder=folder,
        agent="tiny",
        blink=False,
        settings_file=folder / "settings.json",
        themes_dir=folder / "themes",
    )
    result: dict[str, Any] = {"requests": count}
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(
                lambda: app.current is not None and engine.status(app.current) == Status.READY,
                120,
            )
            session = app.current or ""
            view = app.query_one(TranscriptView)
            status = app.query_one("#status", StatusLine)
            composer = app.query_one(Composer)
            most = 0

            def mounted() -> int:
                nonlocal most
                most = max(most, len(view.prompts))
                return most

            def shown() -> Any:
                mounted()
                return next(iter(view.prompts.values()), None)

            last_call = f"call_{count - 1}"
            held: list[float] = []

            def taken() -> bool:
                if engine.pending_count(session) != count:
                    return False
                if not held:
                    held.append(time.perf_counter())
                if not any(f"({count} requests)" in part for part, _ in status.parts):
                    return False
                prompt = shown()
                if prompt is None or getattr(prompt, "waiting", count) != count:
                    return False
                return any(  # the newest tool call's card is on screen too
                    b.kind == "tool" and (b.payload or {}).get("toolCallId") == last_call
                    for b in view.model
                )

            composer.text = f"ask-many n={count}"
            composer.move_cursor(composer.document.end)
            composer.focus()
            await pilot.pause()
            result["rss_before_mb"] = kb("VmRSS")
            cpu, started = time.process_time(), time.perf_counter()
            app.post_message(events.Key("enter", "\r"))  # posted: a press waits for idle
            await until(lambda: shown() is not None)
            rail = app.query_one(SessionRail)
            waits = []
            for shows in (False, True):  # Ctrl+B hides the rail, then shows it again
                pressed = time.perf_counter()
                app.post_message(events.Key("ctrl+b", None))
                await until(lambda: rail.display == shows)  # noqa: B023
                waits.append(time.perf_counter() - pressed)
            result["key_in_burst_ms"] = round(max(waits) * 1000, 1)
            result["asked_when_the_keys_were_taken"] = engine.pending_count(session)
            await until(taken)
            result["take_s"] = round(time.perf_counter() - started, 3)
            result["engine_holds_all_s"] = round(held[0] - started, 3)
            result["take_cpu_s"] = round(time.process_time() - cpu, 3)
            result["widgets_after_take"] = len(app.query("*"))

            first = shown()
            first.focus()
            await until(lambda: app.focused is first)
            pressed = time.perf_counter()
            app.post_message(events.Key("1", "1"))
            await until(lambda: (prompt := shown()) is not None and prompt is not first)
            result["answer_to_next_ms"] = round((time.perf_counter() - pressed) * 1000, 1)

            composer.focus()
            await until(lambda: app.focused is composer)
            pressed = time.perf_counter()
            app.post_message(events.Key("escape", None))
            await until(lambda: engine.status(session) == Status.READY)
            result["cancel_s"] = round(time.perf_counter() - pressed, 3)
            rows = await engine.store.all_rows(session)
            decided = sum(row.kind == "permission" for row in rows)
            if decided != count:
                raise AssertionError(f"{decided} decision rows for {count} requests")
            result["most_prompts_mounted"] = mounted()
    finally:
        await engine.close()
    result["peak_rss_mb"] = kb("VmHWM")
    return result


def child(count: int) -> dict[str, Any]:
    """One run in a fresh interpreter; what it printed (JSON)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.permissions", "--child", str(count)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"the run of {count} failed:\n{done.stderr[-3000:]}")
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def measure(sizes: tuple[int, ...], runs: int) -> dict[str, Any]:
    """Each size `runs` times, interleaved; the run with the shortest take is kept."""
    best: dict[int, dict[str, Any]] = {}
    for _ in range(runs):
        for count in sizes:
            run = child(count)
            if count not in best or run["take_s"] < best[count]["take_s"]:
                best[count] = run
    small, large = best[min(sizes)], best[max(sizes)]
    result: dict[str, Any] = {}
    for count in sizes:
        run = best[count]
        for name, value in run.items():
            if name != "requests":
                result[f"n{count}_{name}"] = value
        result[f"n{count}_take_ms_per_request"] = round(run["take_s"] * 1000 / count, 2)
        result[f"n{count}_cancel_ms_per_request"] = round(run["cancel_s"] * 1000 / count, 2)
    result["size_ratio"] = round(max(sizes) / min(sizes), 2)
    result["take_ratio"] = round(large["take_s"] / small["take_s"], 2)
    result["take_cpu_ratio"] = round(large["take_cpu_s"] / small["take_cpu_s"], 2)
    result["cancel_ratio"] = round(large["cancel_s"] / small["cancel_s"], 2)
    result["peak_rss_ratio"] = round(large["peak_rss_mb"] / small["peak_rss_mb"], 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.permissions", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES)), help="request counts, comma-separated"
    )
    parser.add_argument("--runs", type=int, default=2, help="runs of each size (best kept)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not TINY.exists():
        parser.error(f"run it from a source checkout: {TINY} is missing")
    if args.child:
        from cockpit.ui.app import freeze_startup_objects

        freeze_startup_objects()  # as `cockpit` does before its app runs
        with tempfile.TemporaryDirectory() as name:
            print(json.dumps(asyncio.run(burst(args.child, Path(name)))))
        return 0
    sizes = tuple(sorted(int(size) for size in args.sizes.split(",")))
    result = measure(sizes, args.runs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        width = max(map(len, result))
        for name, value in result.items():
            print(f"{name:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
