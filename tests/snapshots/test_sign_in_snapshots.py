"""The sign-in dialog at 80x24 (an SSH terminal): codex-acp's three ways as its recorded
`initialize` answer lists them, the second picked, its masked field holding a key that
shows as dots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.widgets import Input

from cockpit.api import SignIn
from cockpit.engine.sign_in import offered_methods
from cockpit.ui.screens.sign_in import SignInScreen
from tests.snapshots.test_tui_snapshots import app_with, settle
from tests.snapshots.test_tui_trust_snapshots import SSH, one_session
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
