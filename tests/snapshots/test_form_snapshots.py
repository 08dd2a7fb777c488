"""Snapshots of the forms an agent asks, at 80x24: the demo's form with a field of each
kind (its secret typed masked, the help line saying what the focused field takes), and a
link to open, shown and never opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cockpit.ui.app import CockpitApp
from cockpit.ui.form_prompt import FormPrompt
from tests.snapshots.test_tui_interaction_snapshots import Snap, calm, live_app
from tests.support.ui_helpers import burst, ready, send, wait_until


async def asked(app: CockpitApp, pilot: Any, word: str) -> FormPrompt:
    await ready(app)
    await send(app, pilot, word)
    await wait_until(lambda: len(app.query(FormPrompt)) == 1, 30, "the form")
    prompt = app.query_one(FormPrompt)
    await wait_until(lambda: bool(prompt.parts()) and app.focused is prompt.parts()[0], 15)
    return prompt


def test_a_form_of_each_kind_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    app = live_app(tmp_path, "form")

    async def fill(pilot: Any) -> None:
        await asked(app, pilot, "form")
        burst(app, "tab", "s", "e", "c", "r", "e", "t", "tab")  # a secret, masked
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=fill)


def test_a_link_to_open_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    app = live_app(tmp_path, "link")

    async def show(pilot: Any) -> None:
        await asked(app, pilot, "link")
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=show)
