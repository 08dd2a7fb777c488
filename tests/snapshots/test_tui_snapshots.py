"""Snapshot tests of the TUI (pytest-textual-snapshot). Every picture is deterministic: a
fixed clock, no blinking cursor, stores filled without agents except where the picture is
of the demo agent starting."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import FramesEvent, StatusEvent
from cockpit.engine.core import Engine
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import ThoughtBubble
from cockpit.ui.transcript import TranscriptView
from store import chunk_from_update, note
from store.workload import benchmark_reply, markdown_reply, text_update
from tests.support.snapshot_folders import snapshot_folder
from tests.support.ui_helpers import (
    add_rows,
    add_session,
    fill_now,
    local,
    make_app,
    repaints_done,
    wait_until,
)

TABLE_REPLY = (
    "Here is what I found in the project:\n\n"
    "| file | lines | status |\n|------|------:|--------|\n"
    "| store.py | 420 | ok |\n| fold.py | 230 | ok |\n| view.py | 120 | needs work |\n\n"
    "The fold is the part to read first. It keeps **one row per message**, whatever the "
    "agent sends.\n"
)

Snap = Callable[..., bool]


def project_of(tmp_path: Path) -> Path:
    """A project folder whose path is the same in every run (it shows in the pictures)."""
    return snapshot_folder("project", fresh=False)


def app_with(tmp_path: Path, build: Callable[[Engine, Path], Any] | None = None) -> CockpitApp:
    project = project_of(tmp_path)
    if build is not None:
        fill_now(tmp_path / "home", lambda engine: build(engine, project))
    return make_app(tmp_path, project)


async def settle(pilot: Any) -> None:
    """Until the workers are done and every reply painted, then the screen's update."""
    await pilot.app.workers.wait_for_complete()
    await repaints_done(pilot.app)
    for _ in range(3):
        await pilot.pause()


def test_first_start_with_no_sessions(snap_compare: Snap, tmp_path: Path) -> None:
    """A first session on the demo agent is created and started; the status line shows the
    agent, its mode and model, and that it is ready."""
    app = app_with(tmp_path)

    async def ready(pilot: Any) -> None:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == "ready"
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=ready)


def a_first_start(snap_compare: Snap, tmp_path: Path, size: tuple[int, int]) -> bool:
    """A first start pictured at `size`, once the demo session is ready."""
    app = app_with(tmp_path)

    async def ready(pilot: Any) -> None:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == "ready"
        )
        await settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=ready)


def test_a_first_start_welcomes_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    """The transcript's space says what Cockpit is, the keys to start with, how to run
    another agent and the demo's scenario words; the prompt has a placeholder."""
    assert a_first_start(snap_compare, tmp_path, (80, 24))


def test_a_first_start_welcomes_at_120x40(snap_compare: Snap, tmp_path: Path) -> None:
    assert a_first_start(snap_compare, tmp_path, (120, 40))


AppMaker = Callable[[Path, Callable[[Engine, Path], Any]], CockpitApp]
"""What makes the app a picture is taken of, from a test's folder and what fills its store:
`app_with` (the engine in process), or an app attached to a service on that store."""


async def one_existing_session(engine: Engine, project: Path) -> None:
    await add_session(engine, project, "existing", [("hello", "Hi!")])


def new_session_dialog(
    snap_compare: Snap,
    tmp_path: Path,
    size: tuple[int, int],
    monkeypatch: pytest.MonkeyPatch,
    keys: tuple[str, ...] = (),
    make: AppMaker = app_with,
) -> bool:
    """Ctrl+N over a store with one session, then `keys`, pictured at `size`. PATH is an
    empty folder, so the same agents are missing on every machine."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    app = make(tmp_path, one_existing_session)

    async def open_dialog(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("ctrl+n", *keys)
        await settle(pilot)

    return snap_compare(app, terminal_size=size, run_before=open_dialog)


def test_the_new_session_dialog(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+N: every agent, the installed ones first (with their names), the others marked
    not installed; the highlighted demo agent's description, the folder, the Create and
    Cancel buttons and the keys."""
    assert new_session_dialog(snap_compare, tmp_path, (100, 30), monkeypatch)


def stream_into(
    app: CockpitApp, text: str, upto: int, finish: bool, batch: int = 1
) -> Callable[[Any], Any]:
    """A run_before that streams `text[:upto]` in 4-character frames through the engine's
    store and event path, as an agent would, and optionally ends the turn."""

    async def run(pilot: Any) -> None:
        await settle(pilot)
        engine, session = local(app), app.current or ""
        _, opening = await engine.store.begin_turn(session, "Show me the files")
        engine._emit(FramesEvent(session, tuple(opening)))
        frames: list[Any] = []
        for index in range(0, upto, 4):
            chunk = chunk_from_update(
                session, text_update("agent_message_chunk", text[index : min(index + 4, upto)])
            )
            frames += await engine.store.apply(chunk)
            if len(frames) >= batch:
                engine._emit(FramesEvent(session, tuple(frames)))
                frames = []
                await pilot.pause()
        if frames:
            engine._emit(FramesEvent(session, tuple(frames)))
        if finish:
            await engine.store.end_turn(session)
            engine._emit(StatusEvent(session, "ready"))
        await settle(pilot)

    return run


def one_session(engine_title: str = "table") -> Callable[[Engine, Path], Any]:
    async def build(engine: Engine, project: Path) -> None:
        await add_session(engine, project, engine_title, [])

    return build


def test_a_streamed_table_mid_stream(snap_compare: Snap, tmp_path: Path) -> None:
    """A reply with a table, stopped two thirds of the way: the table so far, live."""
    app = app_with(tmp_path, one_session())
    upto = TABLE_REPLY.index("| view.py")
    assert snap_compare(
        app, terminal_size=(100, 30), run_before=stream_into(app, TABLE_REPLY, upto, finish=False)
    )


def test_a_streamed_table_finished(snap_compare: Snap, tmp_path: Path) -> None:
    """The same reply complete and the turn over: the whole table, rendered as history."""
    app = app_with(tmp_path, one_session())
    run = stream_into(app, TABLE_REPLY, len(TABLE_REPLY), finish=True)
    assert snap_compare(app, terminal_size=(100, 30), run_before=run)


def thought_session() -> Callable[[Engine, Path], Any]:
    async def build(engine: Engine, project: Path) -> None:
        session = await add_session(engine, project, "thinking", [])
        await engine.store.begin_turn(session, "Why is the build slow?")
        thought = "The build runs the tests twice.\nOnce in CI, once in the pre-commit hook.\nThat doubles the time."
        await engine.store.apply(
            chunk_from_update(session, text_update("agent_thought_chunk", thought))
        )
        await engine.store.apply(
            chunk_from_update(
                session, text_update("agent_message_chunk", "It runs the tests twice.")
            )
        )
        await engine.store.end_turn(session)

    return build


def test_a_thought_collapsed(snap_compare: Snap, tmp_path: Path) -> None:
    """A thought shows as one line."""
    app = app_with(tmp_path, thought_session())
    assert snap_compare(app, terminal_size=(100, 24), run_before=settle)


async def expand_the_thought(pilot: Any) -> None:
    """Enter on the thought."""
    await settle(pilot)
    pilot.app.query_one(ThoughtBubble).focus()
    await pilot.press("enter")
    await settle(pilot)


def test_a_thought_expanded(snap_compare: Snap, tmp_path: Path) -> None:
    """Enter on the thought shows all of it."""
    app = app_with(tmp_path, thought_session())
    assert snap_compare(app, terminal_size=(100, 24), run_before=expand_the_thought)


async def three_statuses(engine: Engine, project: Path) -> None:
    """Sessions whose agent exited, or closed."""
    await add_session(engine, project, "refactor the store", [("go", "Done.")], status="exited")
    await add_session(engine, project, "write the docs", [("docs", "Written.")], status="closed")
    await add_session(engine, project, "fix the tests", [("fix", "Fixed.")], status="closed")


async def show_the_rail(pilot: Any) -> None:
    await settle(pilot)
    pilot.app.overview.refresh_rail()
    await settle(pilot)


def test_sessions_with_different_statuses(snap_compare: Snap, tmp_path: Path) -> None:
    """The rail: an agent that exited (✗), a finished turn not yet read (◆), the session on
    screen (closed, ·)."""
    app = app_with(tmp_path, three_statuses)
    assert snap_compare(app, terminal_size=(100, 24), run_before=show_the_rail)


async def runs_beside_a_session(engine: Engine, project: Path) -> None:
    """Two sessions of `cockpit run` (one whose agent exited) and one of the user's."""
    await add_session(
        engine, project, "nightly lint of every package", [("lint", "Clean.")], run=True
    )
    await add_session(engine, project, "bump deps", [("bump", "Done.")], status="exited", run=True)
    await add_session(engine, project, "fix the tests", [("fix", "Fixed.")], status="closed")


def test_runs_on_a_small_terminal(snap_compare: Snap, tmp_path: Path) -> None:
    """80x24: the compact rail ends the title of each session of `cockpit run` with a dim
    `run` at its right edge (a long title gives way to it); the user's own has none."""
    app = app_with(tmp_path, runs_beside_a_session)
    assert snap_compare(app, terminal_size=(80, 24), run_before=show_the_rail)


async def a_reply_on_the_page_edge(engine: Engine, project: Path) -> None:
    """A long reply with 20 rows before it and 120 after: the tail page starts right after
    it."""
    session = await add_session(engine, project, "long history", [])
    await add_rows(engine, session, 20, size=10)
    long_reply = markdown_reply(random.Random(4), 900)
    await engine.store.apply(
        chunk_from_update(session, text_update("agent_message_chunk", long_reply))
    )
    await engine.store.apply(note(session, "notice", "the page edge is just above this line"))
    await add_rows(engine, session, 119, size=10)


async def page_in_the_reply(pilot: Any) -> None:
    """Load the earlier page and scroll to the top of the reply in it."""
    await settle(pilot)
    view = pilot.app.query_one(TranscriptView)
    await view.load_earlier()
    await settle(pilot)
    agent = next(b for b in view.model if b.kind == "agent")
    widget = view.widgets[agent.key]
    view.scroll_to_widget(widget, animate=False, top=True)
    await settle(pilot)


def test_an_earlier_page_with_a_message_straddling_the_edge(
    snap_compare: Snap, tmp_path: Path
) -> None:
    """Scrolled to the top after loading the earlier page: the long reply that sits where
    the two pages meet is one whole bubble."""
    app = app_with(tmp_path, a_reply_on_the_page_edge)
    assert snap_compare(app, terminal_size=(100, 30), run_before=page_in_the_reply)


def conversation() -> Callable[[Engine, Path], Any]:
    async def build(engine: Engine, project: Path) -> None:
        session = await add_session(engine, project, "tour", [("What can you do?", TABLE_REPLY)])
        await engine.store.apply(
            chunk_from_update(
                session,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t1",
                    "title": "Read README.md",
                    "kind": "read",
                    "status": "completed",
                },
            )
        )
        await engine.store.apply(note(session, "permission", "Allowed once: Write notes.md"))
        await engine.store.end_turn(session)

    return build


def test_a_small_terminal(snap_compare: Snap, tmp_path: Path) -> None:
    """80x24 over SSH: the rail is compact (glyph and title), the transcript still readable."""
    app = app_with(tmp_path, conversation())
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_a_wide_terminal(snap_compare: Snap, tmp_path: Path) -> None:
    """160x48: the rail shows agent, folder and age under each title."""
    app = app_with(tmp_path, conversation())
    assert snap_compare(app, terminal_size=(160, 48), run_before=settle)


@pytest.mark.parametrize("theme", ["cockpit-dark", "cockpit-light", "cockpit-ansi"])
def test_each_theme(snap_compare: Snap, tmp_path: Path, theme: str) -> None:
    """The same conversation in each bundled theme."""
    app = app_with(tmp_path, conversation())

    async def themed(pilot: Any) -> None:
        await settle(pilot)
        pilot.app.theme = theme
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 26), run_before=themed)


def test_the_help_screen(snap_compare: Snap, tmp_path: Path) -> None:
    """F1: every key in one place."""
    app = app_with(tmp_path, conversation())

    async def help_screen(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 40), run_before=help_screen)


def test_the_end_of_the_benchmark_reply(snap_compare: Snap, tmp_path: Path) -> None:
    """The last lines of the 50 KB benchmark reply, ending with its marker line: its 12,476
    chunks of 4 characters folded by the store, their frames handed to the view in
    batches of 400, no agent involved (the demo agent streaming it for real is
    `test_the_benchmark_reply_on_screen_equals_what_the_agent_sent` in test_tui_flows)."""
    app = app_with(tmp_path, one_session("bench"))
    text = benchmark_reply()
    assert snap_compare(
        app,
        terminal_size=(120, 40),
        run_before=stream_into(app, text, len(text), finish=True, batch=400),
    )


def test_the_new_session_dialog_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl+N in an 80x24 terminal, then Enter on Claude Code, which is not installed: the
    whole dialog fits, with the refusal and the install command first in the detail,
    then the description, the folder and the Create and Cancel buttons."""
    keys = ("down", "down", "enter")
    assert new_session_dialog(snap_compare, tmp_path, (80, 24), monkeypatch, keys)


def test_the_help_screen_at_80x24_scrolled_to_its_end(snap_compare: Snap, tmp_path: Path) -> None:
    """F1 in an 80x24 terminal, scrolled to the end: the last keys, the rail's legend on
    two whole lines (it was cut at "◌ starti"), and how to close the help."""
    app = app_with(tmp_path, conversation())

    async def help_screen(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        pilot.app.screen.query_one("#dialog").scroll_end(animate=False, immediate=True)
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=help_screen)


def test_the_rail_hides_by_itself_at_60_columns(snap_compare: Snap, tmp_path: Path) -> None:
    """60x24: the rail hides by itself, the transcript takes the width."""
    app = app_with(tmp_path, three_statuses)
    assert snap_compare(app, terminal_size=(60, 24), run_before=show_the_rail)


def test_ctrl_b_shows_the_rail_at_60_columns(snap_compare: Snap, tmp_path: Path) -> None:
    """60x24 after Ctrl+B: the compact rail, the session on screen marked with ► beside
    its state glyph."""
    app = app_with(tmp_path, three_statuses)

    async def shown(pilot: Any) -> None:
        await show_the_rail(pilot)
        await pilot.press("ctrl+b")
        await settle(pilot)

    assert snap_compare(app, terminal_size=(60, 24), run_before=shown)


@pytest.mark.parametrize("theme", ["dracula", "cockpit-ansi"])
def test_the_session_on_screen_at_80x24(snap_compare: Snap, tmp_path: Path, theme: str) -> None:
    """80x24: the session on screen is marked with ► in the rail whatever the theme, and
    the rail's edge shows (dracula drew it in a shade of the rail's background)."""
    app = app_with(tmp_path, three_statuses)

    async def themed(pilot: Any) -> None:
        pilot.app.theme = theme
        await show_the_rail(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=themed)
