"""Snapshot tests of the trust flows, at 80x24 (an SSH terminal): the quit question, the
question before an export replaces a file, the permission rules on a screen of their own, a
reply cut by a quit, the status line of an agent that failed to start with the tokens of the
last turn, and toasts that stay off the composer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.api import Status
from cockpit.engine.core import Engine
from cockpit.engine.recovery import CUT_BY_A_STOP
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.screens.reading import TextScreen
from cockpit.ui.session_states import quit_question
from store import note
from tests.snapshots.test_tui_snapshots import app_with, settle
from tests.support.ui_helpers import add_session

Snap = Callable[..., bool]
SSH = (80, 24)


async def one_session(engine: Engine, project: Path) -> None:
    await add_session(engine, project, "refactor the store", [("go", "Done: the store folds.")])


def test_quitting_while_agents_work_asks_first(snap_compare: Snap, tmp_path: Path) -> None:
    app = app_with(tmp_path, one_session)

    async def ask(pilot: Any) -> None:
        await settle(pilot)
        question = quit_question(2, 1)
        assert question is not None
        app.open_screen(ConfirmScreen(question, "Quit", "Stay"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SSH, run_before=ask)


def test_an_export_asks_before_it_replaces_a_file(snap_compare: Snap, tmp_path: Path) -> None:
    app = app_with(tmp_path, one_session)

    async def ask(pilot: Any) -> None:
        await settle(pilot)
        app.open_screen(ConfirmScreen("Replace /work/project/notes.md?", "Replace", "Keep"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SSH, run_before=ask)


def test_the_permission_rules_are_a_screen_not_a_toast(snap_compare: Snap, tmp_path: Path) -> None:
    app = app_with(tmp_path, one_session)

    async def rules(pilot: Any) -> None:
        await settle(pilot)
        await app.run_slash(app.current or "", "policy", "edit allow")
        await app.run_slash(app.current or "", "policy", "")
        await settle(pilot)
        assert isinstance(app.screen, TextScreen)

    assert snap_compare(app, terminal_size=SSH, run_before=rules)


def test_a_reply_cut_by_a_crash_says_so_and_the_failed_start_says_why(
    snap_compare: Snap, tmp_path: Path
) -> None:
    async def build(engine: Engine, project: Path) -> None:
        session = await add_session(
            engine, project, "long answer", [("explain the fold", "The fold keeps one row per")]
        )
        await engine.store.apply(note(session, "notice", CUT_BY_A_STOP))
        usage = {
            "used": 23843,
            "size": 200000,
            "lastTurn": {"inputTokens": 71132, "outputTokens": 117, "cachedReadTokens": 47172},
        }
        await engine.store.update_session(session, status=Status.ERROR, usage=usage)

    app = app_with(tmp_path, build)
    assert snap_compare(app, terminal_size=(100, 24), run_before=settle)


def test_toasts_stack_above_the_transcript_not_over_the_composer(
    snap_compare: Snap, tmp_path: Path
) -> None:
    app = app_with(tmp_path, one_session)

    async def toasts(pilot: Any) -> None:
        await settle(pilot)
        app.notify("Exported", timeout=60)
        app.notify("Press Ctrl+C again to quit", timeout=60)
        await settle(pilot)

    assert snap_compare(app, terminal_size=SSH, run_before=toasts)
