"""Building apps for the TUI tests: an isolated home, a fixed clock, stores filled without
any agent (for deterministic pictures), and waiting for the engine."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from textual import events
from textual.keys import key_to_character

from cockpit.api import EngineAPI, Status
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.composer import Composer
from store import chunk_from_update, note
from store.workload import text_update
from tests.support.waiting import eventually

NOW = 1_800_000_000.0
"""The fixed time of the tests' clocks."""

T = TypeVar("T")


def engine_factory(
    home: Path, clock: Callable[[], float] = lambda: NOW
) -> Callable[[], Awaitable[Engine]]:
    async def open_engine() -> Engine:
        return await Engine.open(
            home, registry=load_registry(home / "config"), clock=clock, handshake_timeout=15
        )

    return open_engine


def make_app(
    tmp_path: Path,
    folder: Path | None = None,
    *,
    agent: str | None = None,
    engine_clock: Callable[[], float] = lambda: NOW,
    engine: Callable[[], Awaitable[EngineAPI]] | None = None,
) -> CockpitApp:
    """An app on an isolated home in `tmp_path`, its clock two minutes after NOW (the
    engine's at NOW, or ticking from it when the order of what it stamps matters), on
    the engine `engine` opens (by default one in process on the home)."""
    home = tmp_path / "home"
    project = folder or tmp_path / "project"
    project.mkdir(exist_ok=True)
    return CockpitApp(
        engine or engine_factory(home, engine_clock),
        folder=project,
        agent=agent,
        clock=lambda: NOW + 120,
        blink=False,
        settings_file=home / "config" / "settings.json",
        themes_dir=home / "config" / "themes",
    )


def ticking(start: float = NOW, step: float = 0.001) -> Callable[[], float]:
    """A clock that moves a millisecond per reading: rows and sessions made in the same
    order get the same times in every run, and sort apart."""
    count = iter(range(10**9))
    return lambda: start + step * next(count)


async def fill(home: Path, build: Callable[[Engine], Awaitable[None]]) -> None:
    """Open an engine on `home` (a ticking clock from NOW), run `build`, close it."""
    engine = await engine_factory(home, ticking())()
    try:
        await build(engine)
    finally:
        await engine.close()


def fill_now(home: Path, build: Callable[[Engine], Awaitable[None]]) -> None:
    """`fill`, from synchronous code (snapshot tests)."""
    asyncio.run(fill(home, build))


async def add_session(
    engine: Engine,
    folder: Path,
    title: str,
    turns: list[tuple[str, str]],
    status: str = "closed",
    *,
    run: bool = False,
) -> str:
    """A stored session with these (prompt, reply) turns, no agent involved, that the user
    has not seen yet (`run`: as `cockpit run` makes one)."""
    record = await engine.create_session("demo", folder, title=title, run=run)
    for prompt, reply in turns:
        await engine.store.begin_turn(record.id, prompt)
        for i in range(0, len(reply), 4):
            await engine.store.apply(
                chunk_from_update(record.id, text_update("agent_message_chunk", reply[i : i + 4]))
            )
        await engine.store.end_turn(record.id)
    await engine.store.update_session(record.id, status=status, unread=True)
    return record.id


async def add_rows(engine: Engine, session: str, count: int, size: int = 60) -> None:
    """`count` notice rows, numbered, for paging tests."""
    for number in range(count):
        await engine.store.apply(note(session, "notice", f"row {number:05d} " + "x" * size))


def local(app: CockpitApp) -> Engine:
    """The app's engine as the engine in process it is in tests, for what a client of the
    contract cannot do: feed the store directly, read a live session's state."""
    engine = app.engine
    assert isinstance(engine, Engine), f"not an engine in process: {type(engine).__name__}"
    return engine


async def focused_composer(app: CockpitApp, *, ready_first: bool = True) -> tuple[str, Composer]:
    """Once the session on screen is ready (or, not `ready_first`, only shown): its id, and
    the composer, focused."""
    if ready_first:
        await ready(app)
    else:
        await wait_until(lambda: app.current is not None)
    composer = app.query_one(Composer)
    composer.focus()
    return app.current or "", composer


def burst(app: CockpitApp, *keys: str) -> None:
    """The keys at once, as a terminal delivers what tmux sends in one write (and a fast
    typist's keys, and a held key): no pause for the app between them."""
    for key in keys:
        app.post_message(events.Key(key, key_to_character(key)))


async def settled(pilot: Any) -> None:
    """Until the app has handled every message its screen was sent and finished every
    worker those started (and their animations): what a burst of keys leads to has then
    happened, so a test may assert what did not happen."""
    app = pilot.app
    for _ in range(100):
        await pilot.wait_for_scheduled_animations()
        running = [worker for worker in app.workers if not worker.is_finished]
        if not running:
            return
        await app.workers.wait_for_complete(running)
    raise AssertionError(f"the app never settled: {list(app.workers)}")


async def handled_so_far(app: CockpitApp, rounds: int = 3) -> None:
    """Until the app has handled the messages it was sent before now, and those their
    handlers sent (`rounds` deep): a callback goes to the back of its queue, which is
    first in first out. Unlike a pilot's pause, this does not wait for the app to be idle,
    so it returns while an agent keeps the app busy."""
    for _ in range(rounds):
        handled = asyncio.Event()
        app.call_later(handled.set)
        await handled.wait()


async def steady(pilot: Any, read: Callable[[], T], pauses: int = 3) -> T:
    """What `read()` gives once it has stayed the same over `pauses` pauses in a row: a
    layout settles in steps (a prompt mounted, then the scrollbar it brought narrows it)."""
    last, same = read(), 0
    for _ in range(200):
        await pilot.pause()
        now = read()
        same = same + 1 if now == last else 0
        if same == pauses:
            return now
        last = now
    raise AssertionError(f"never steady over {pauses} pauses: {last!r}")


async def wait_until(
    condition: Callable[[], object], timeout: float = 15, what: str | None = None
) -> None:
    """Wait for `condition`; a timeout fails naming what was awaited."""
    await eventually(condition, timeout, what)


async def repaints_done(app: CockpitApp) -> None:
    """Until no reply waits for a paced repaint: on a busy machine one waits longer than a
    few pauses, and a picture taken then shows part of the text."""
    await wait_until(
        lambda: not any(bubble.repaint_pending for bubble in app.query(AgentBubble)),
        what="the replies' last repaints",
    )


async def ready(app: CockpitApp) -> str:
    """Wait for the session on screen to be ready for a prompt; its id."""
    await wait_until(
        lambda: app.current is not None and app.engine.status(app.current) == Status.READY
    )
    return app.current or ""


async def send(app: CockpitApp, pilot: Any, text: str) -> None:
    """Type `text` into the composer (cursor at its end) and press Enter."""
    composer = app.query_one(Composer)
    composer.focus()
    composer.text = text
    composer.move_cursor(composer.document.end)
    await pilot.press("enter")
