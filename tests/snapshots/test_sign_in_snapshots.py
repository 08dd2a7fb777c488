"""Signing in at 80x24 (an SSH terminal): the dialog with codex-acp's three ways as its
recorded `initialize` answer lists them, the second picked, its masked field holding a key
that shows as dots; and a terminal way's login run as a card, waiting for a code."""

from __future__ import annotations

import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.widgets import Input

from cockpit.api import AgentSpec, SignIn, Status
from cockpit.engine.sign_in import offered_methods
from cockpit.ui.app import CockpitApp
from cockpit.ui.screens.sign_in import SignInScreen
from tests.engine.test_engine_restart import TINY
from tests.snapshots.test_tui_interaction_snapshots import calm, fixed_folder
from tests.snapshots.test_tui_snapshots import app_with, settle
from tests.snapshots.test_tui_trust_snapshots import SSH, one_session
from tests.support.ui_helpers import NOW, burst, engine_factory, focused_composer, wait_until
from tests.unit.test_sign_in_methods import initialize_result

Snap = Callable[..., bool]


def test_the_sign_in_dialog_masks_the_key(snap_compare: Snap, tmp_path: Path) -> None:
    app = app_with(tmp_path, one_session)
    methods = offered_methods(initialize_result("codex-acp-text.jsonl")["authMethods"])
    needed = SignIn("s-1", "Authentication required", methods)

    async def sign_in(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("escape")
        mounted = app.open_screen(SignInScreen(needed, "codex"))
        assert mounted is not None
        await mounted
        await pilot.press("down", "enter", *"sk-secret")
        await settle(pilot)
        assert app.screen.query_one(Input).value == "sk-secret"

    assert snap_compare(app, terminal_size=SSH, run_before=sign_in)


def test_a_terminal_login_waits_for_a_code_in_a_card(snap_compare: Snap, tmp_path: Path) -> None:
    """The headless screen cannot be handed over, so the login runs as a card: it asks for
    the code, the status line says where Enter sends it, the code is half typed."""
    folder = fixed_folder("login-card")
    script = folder / "tiny-agent"  # a short command to show, the same on every machine
    script.write_text('#!/bin/sh\nexec "$TINY_PYTHON" "$TINY_AGENT" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {"TINY_PYTHON": sys.executable, "TINY_AGENT": TINY, "TINY_LOGIN_CODE": "ABCD-1234"}
    spec = AgentSpec("tiny", ("sh", "tiny-agent", "--auth", "terminal"), "tiny", env)
    app = CockpitApp(
        engine_factory(tmp_path / "home", lambda: NOW),
        folder=folder,
        agent=spec,
        clock=lambda: NOW + 120,
        blink=False,
        settings_file=tmp_path / "home" / "config" / "settings.json",
        themes_dir=tmp_path / "home" / "config" / "themes",
    )

    async def waiting(pilot: Any) -> None:
        session, _ = await focused_composer(app, ready_first=False)
        await wait_until(lambda: app.engine.status(session) == Status.ERROR)
        app.post_message(events.Key("slash", "/"))
        burst(app, *"login", "enter", "enter")
        await wait_until(lambda: app.shell.reads_input(session))
        rows = app.engine.rows
        for _ in range(100):
            shell = [r for r in await rows(session) if r.kind == "shell"]
            if shell and "paste the code" in shell[0].text:
                break
            await pilot.pause(0.05)
        burst(app, *"ABCD")
        await calm(pilot)
        app.clear_notifications()
        await calm(pilot)

    assert snap_compare(app, terminal_size=SSH, run_before=waiting)
