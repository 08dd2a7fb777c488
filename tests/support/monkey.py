"""A seeded monkey for the TUI: thousands of key presses drawn from every binding and
completion, sent in bursts with no pause between them (as tmux sends them, and as a held
key does), while real demo agents stream, idle and wait for permission.

It ends with the app alive, no failure reported by the screen, every transcript rebuilt
from the engine's live frames equal to the stored rows, what the screen shows equal to them
too, and the store's integrity check ok. `tests/ui/test_tui_monkey.py` runs a short version;
run a long one with:

    .venv/bin/python -m tests.support.monkey --presses 20000 --seed 7
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.transcript import TranscriptView
from tests.support.engine_helpers import Recorder
from tests.support.ui_helpers import add_session, burst, fill, make_app, wait_until

SIZES = ((80, 24), (120, 40), (100, 30), (60, 20))
"""Terminal sizes the monkey resizes to, mid-stream."""

MOST_SESSIONS = 8
"""Past this many sessions (each with an agent process) the monkey stops creating more."""

WORDS = ("slow", "permission", "tools", "table", "think", "plan", "build", "commands", "modes")
"""Demo scenario words the monkey sends as prompts (none crashes the agent on purpose)."""

TYPING = ("a", "b", "c", "d", "e", "space", "backspace", "enter", "ctrl+j")
"""Keys that write a prompt: letters that spell no scenario word, and its editing keys."""

APP_KEYS = (
    "ctrl+n", "f2", "f4", "f8", "ctrl+up", "ctrl+down", "ctrl+b", "ctrl+end", "f3",
    "ctrl+o", "ctrl+t", "ctrl+g", "f1", "escape", "ctrl+c", "ctrl+p", "shift+tab",
)  # fmt: skip
MOVING = (
    "tab", "shift+tab", "up", "down", "j", "k", "home", "end", "pageup", "pagedown",
    "ctrl+home", "c", "f", "s", "p", "enter", "space",
)  # fmt: skip
ANSWERS = ("1", "2", "3", "y", "n", "escape", "enter", "tab")
"""Keys that answer questions and dialogs."""


def typed(text: str) -> list[str]:
    """The key names that type `text`."""
    names = {" ": "space", "/": "slash", "@": "at", "-": "minus", ".": "full_stop"}
    return [names.get(character, character) for character in text]


@dataclass
class Monkey:
    """A seeded stream of key bursts."""

    rng: random.Random
    log: list[str] = field(default_factory=list)

    def burst(self, sessions: int) -> list[str]:
        """The next keys to send together."""
        rng = self.rng
        choice = rng.random()
        if choice < 0.08:
            word = rng.choice(WORDS)
            return [*typed(word), "enter"]
        if choice < 0.12:
            command = rng.choice(
                ["/export", "/policy", "/inbox", "/help", "/rename monkey", "/mode plan", "/close"]
                + (["/new demo"] if sessions < MOST_SESSIONS else [])
            )
            return [*typed(command), "enter"]
        if choice < 0.16:
            return [
                "slash",
                *rng.choices(TYPING[:5], k=rng.randint(0, 2)),
                rng.choice(["tab", "down", "enter", "escape"]),
            ]
        if choice < 0.20:
            return [
                "at",
                *rng.choices(("R", "E", "a", "m"), k=rng.randint(0, 3)),
                rng.choice(["tab", "down", "enter", "escape"]),
            ]
        if choice < 0.45:
            return rng.choices(TYPING, k=rng.randint(1, 6))
        if choice < 0.70:
            keys = [  # the palette's commands open sessions too
                key
                for key in APP_KEYS
                if key not in ("ctrl+n", "ctrl+p") or sessions < MOST_SESSIONS
            ]
            held = rng.choice(keys)
            return [held] * rng.choice([1, 1, 2, 2, 3, 6])  # pressed twice, or held down
        if choice < 0.90:
            return rng.choices(MOVING, k=rng.randint(1, 5))
        return rng.choices(ANSWERS, k=rng.randint(1, 3))


async def stored_sessions(home: Path, project: Path) -> None:
    """Six stored sessions with some history, no agent running."""

    async def build(engine: Any) -> None:
        for number in range(6):
            turns = [
                (f"question {number}.{t}", f"Answer {number}.{t}: " + "words " * 40)
                for t in range(3)
            ]
            await add_session(engine, project, f"stored {number}", turns)

    await fill(home, build)


@dataclass
class Outcome:
    """What a monkey run saw."""

    presses: int
    seconds: float
    failures: list[str]
    quits: int
    sessions: int


async def run(
    tmp: Path, presses: int, seed: int, progress: Callable[[int], None] | None = None
) -> Outcome:
    """Run the monkey against a real app on real demo agents; raise AssertionError (with
    the seed and the last keys) when an invariant breaks."""
    project = tmp / "project"
    project.mkdir()
    (project / "README.md").write_text("# Monkey\n\nA project the monkey works in.\n")
    await stored_sessions(tmp / "home", project)
    app = make_app(tmp, project)
    monkey = Monkey(random.Random(seed))
    failures: list[str] = []
    quits: list[object] = []
    recorder = Recorder()
    started = time.monotonic()

    def report(what: str, error: Exception) -> None:
        failures.append(f"could not {what}: {error!r}")

    app.report_failure = report  # type: ignore[method-assign]
    app.exit = lambda *args, **kwargs: quits.append(args)  # type: ignore[method-assign]
    sent = 0
    async with app.run_test(size=SIZES[0]) as pilot:
        await wait_until(lambda: app.current is not None, 30)
        app.engine.subscribe(recorder)
        before = {r.id: len(await app.engine.rows(r.id)) for r in await app.engine.sessions()}
        # Something streams, something waits for an answer, something idles.
        others = [s for s in app.records if s != app.current]
        app.engine.send(others[0], "slow")
        app.engine.send(others[1], "permission")
        while sent < presses:
            keys = monkey.burst(len(app.records))
            monkey.log.append(" ".join(keys))
            burst(app, *keys)
            sent += len(keys)
            roll = monkey.rng.random()
            if roll < 0.02:
                await pilot.resize_terminal(*monkey.rng.choice(SIZES))
            await asyncio.sleep(0 if roll < 0.7 else 0.02 if roll < 0.95 else 0.2)
            if not app.is_running:
                raise AssertionError(failure("the app stopped", seed, monkey))
            if progress is not None:
                progress(sent)
        for _ in range(5):  # the keys of the last bursts (a Ctrl+Q among them) are handled
            await pilot.pause(0.05)
        del app.exit  # Cockpit's own again: the test is over
        await settle(app, pilot)
        problems = await converged(app, pilot, recorder, before)
        problems += await keyboard_works(app, pilot)
        if problems or failures:
            raise AssertionError(failure("; ".join([*failures, *problems]), seed, monkey))
        sessions = len(app.records)
    check_integrity(tmp / "home" / "cockpit.db", seed, monkey)
    return Outcome(sent, time.monotonic() - started, failures, len(quits), sessions)


async def settle(app: CockpitApp, pilot: Any) -> None:
    """End every turn (answering what waits with a cancel) and let the screen catch up."""
    async with asyncio.timeout(30):
        while len(app.screen_stack) > 1:  # close every dialog as a user does
            await pilot.press("escape")
    engine = app.engine
    deadline = time.monotonic() + 90
    while busy := [s for s in app.records if engine.status(s) in BUSY]:
        if time.monotonic() > deadline:
            states = ", ".join(f"{s}: {engine.status(s)}" for s in busy)
            raise AssertionError(f"turns that never end: {states}")
        for session in busy:
            await engine.cancel(session)
        await asyncio.sleep(0.2)
    for _ in range(5):
        await pilot.pause(0.05)


async def keyboard_works(app: CockpitApp, pilot: Any) -> list[str]:
    """Whether what is typed now still reaches the prompt (no key held for good)."""
    composer = app.query_one(Composer)
    composer.clear()
    composer.focus()
    await pilot.pause()
    burst(app, *"zq")
    try:
        await wait_until(lambda: composer.text == "zq", 5)
    except AssertionError:
        where = (
            f"{composer.text!r}; focus {app.focused!r}, screens {len(app.screen_stack)},"
            f" keys held: {app.keys.holding}"
        )
        return [f"keys typed after the monkey never reached the prompt ({where})"]
    return []


BUSY = (Status.WORKING, Status.WAITING, Status.CANCELLING, Status.STARTING)

CONVERGE = 15.0
"""Seconds the store and the screen get to agree once every turn has ended: a chunk the
agent sent before its cancelled turn ended may still be on its way through the inbox
(read, folded, drawn); a row that is really lost never arrives."""


async def converged(
    app: CockpitApp, pilot: Any, recorder: Recorder, before: dict[str, int]
) -> list[str]:
    """What still differs (see `compare`) once the last chunks on their way are in."""
    deadline = time.monotonic() + CONVERGE
    while (problems := await compare(app, recorder, before)) and time.monotonic() < deadline:
        await pilot.pause(0.2)
    return problems


async def compare(app: CockpitApp, recorder: Recorder, before: dict[str, int]) -> list[str]:
    """What differs between the store and what the engine streamed, or the screen shows."""
    problems = []
    view = app.query_one(TranscriptView)
    for session in list(app.records):
        rows = await app.engine.rows(session)
        streamed = rows[before.get(session, 0) :]
        live = [(b.key, b.kind, b.text) for b in recorder.view(session)]
        stored = [(r.key, r.kind, r.text) for r in streamed]
        if live != stored:
            first = next(
                (i for i, pair in enumerate(zip(live, stored, strict=False)) if pair[0] != pair[1]),
                min(len(live), len(stored)),
            )
            seen = live[first] if first < len(live) else None
            kept = stored[first] if first < len(stored) else None
            problems.append(
                f"session {session}: the live frames do not rebuild its rows: bubble {first} "
                f"is {short(seen)}, its row {short(kept)}; rows {outline(streamed)}, "
                f"bubbles {outline(list(recorder.view(session)))}"
            )
        if session == view.session:
            by_key = {r.key: (r.kind, r.text) for r in rows}
            for bubble in view.model:
                if by_key.get(bubble.key) != (bubble.kind, bubble.text):
                    problems.append(f"session {session}: bubble {bubble.key} differs from its row")
    return problems


def short(item: tuple[str, str, str] | None) -> str:
    """A bubble or row as its key, kind and length."""
    return "none" if item is None else f"{item[0]} {item[1]} ({len(item[2])} characters)"


def outline(items: list[Any]) -> str:
    """Rows or bubbles as seq:key:length, for a failure message."""
    return ", ".join(f"{i.seq}:{i.key}:{len(i.text)}" for i in items)


def check_integrity(path: Path, seed: int, monkey: Monkey) -> None:
    with sqlite3.connect(path) as db:
        (result,) = db.execute("PRAGMA integrity_check").fetchone()
    if result != "ok":
        raise AssertionError(failure(f"integrity check: {result}", seed, monkey))


def failure(what: str, seed: int, monkey: Monkey) -> str:
    last = "\n  ".join(monkey.log[-20:])
    return f"{what} (seed {seed}; the last bursts, oldest first:\n  {last})"


def main() -> int:
    parser = argparse.ArgumentParser(description="Press thousands of keys in Cockpit's TUI.")
    parser.add_argument("--presses", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()

    def progress(sent: int) -> None:
        if sent % 1000 < 6:
            print(f"  {sent} keys", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="cockpit-monkey-") as folder:
        os.environ["COCKPIT_HOME"] = str(Path(folder) / "home")  # nothing of the user's
        outcome = asyncio.run(run(Path(folder), options.presses, options.seed, progress))
    print(
        f"{outcome.presses} keys in {outcome.seconds:.0f} s (seed {options.seed}): the app is "
        f"alive, {outcome.sessions} sessions, every transcript equals its rows, the store is "
        f"intact; {outcome.quits} quit(s) asked for and held back"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
