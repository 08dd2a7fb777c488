"""The screen and the bounds, against the engine in its process and a real service: a draft
past what Cockpit keeps stays in the prompt, is not saved, and the user is told once; a
prompt past what a request may carry stays in the prompt, nothing is sent, and the user is
told why; a prompt between the two goes as any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events

from cockpit import bounds
from cockpit.bounds import DRAFT_BYTES
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.drafts import DRAFT_SAVE_DELAY
from tests.snapshots.test_tui_snapshots import Snap, app_with, settle
from tests.support.ui_helpers import ready, wait_until
from tests.support.ui_service_helpers import Engines

SIZE = (100, 30)


def lines(size: int) -> str:
    """About `size` bytes of prose, in lines of 60 characters (as a pasted file is)."""
    line = "a line of a long pasted document, it goes on and on like so\n"
    return line * (size // len(line) + 1)


async def paste(app: CockpitApp, pilot: Any, text: str) -> Composer:
    """Paste `text` into the prompt (as a terminal delivers a paste)."""
    composer = app.query_one(Composer)
    composer.focus()
    app.post_message(events.Paste(text))  # as the terminal sends it: to the focused widget
    await wait_until(lambda: composer.text.endswith(text), 30, "the paste to land")
    await pilot.pause()
    return composer


def toasts(app: CockpitApp, words: str) -> list[str]:
    return [n.message for n in app._notifications if words in n.message]


async def stored_draft(app: CockpitApp, session: str) -> str:
    return (await app.engine.session(session)).draft


async def test_a_draft_past_the_bound_stays_on_screen_unsaved_and_is_said_once(
    engines: Engines,
) -> None:
    app = engines.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        session = await ready(app)
        await paste(app, pilot, "a draft that is kept")
        await wait_until(lambda: stored_draft(app, session), 10, "the short draft to be saved")
        big = lines(DRAFT_BYTES + 1000)
        composer = await paste(app, pilot, big)
        await pilot.press(*"and more")
        await wait_until(lambda: toasts(app, "Cockpit keeps: it stays"), 15, "the word said")
        await pilot.pause(DRAFT_SAVE_DELAY + 0.5)  # time to say it again, which it must not
        assert composer.text == "a draft that is kept" + big + "and more"  # on screen, whole
        assert await stored_draft(app, session) == "a draft that is kept"  # not saved
        (said,) = toasts(app, "Cockpit keeps: it stays")  # once, for all that typing
        assert "it stays in the prompt, but is not saved" in said
        composer.text = ""
        await paste(app, pilot, "short again")
        await wait_until(
            lambda: _equals(stored_draft(app, session), "short again"), 10, "the draft saved"
        )
        await paste(app, pilot, big)  # past it again: said again
        await wait_until(lambda: len(toasts(app, "Cockpit keeps: it stays")) == 2)


async def _equals(read: Any, expected: str) -> bool:
    return bool(await read == expected)


SMALLER_REQUESTS = 4 * 1024 * 1024
"""The bound on a request in the test below: the screen's rule is the same at any bound, and
pasting 16 MB into the prompt takes the text area half a minute on a busy 2-core machine
(the rule at the real bound is checked in `test_bounds.py`, and the client's refusal of a
20 MB request in `test_service_bounds.py`)."""


async def test_a_prompt_past_a_requests_bound_is_not_sent_and_stays(
    engines: Engines, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounds, "REQUEST_BYTES", SMALLER_REQUESTS)
    app = engines.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        session = await ready(app)
        huge = lines(SMALLER_REQUESTS + 1000)
        composer = await paste(app, pilot, huge)
        await pilot.press("enter")
        await wait_until(lambda: toasts(app, "nothing was sent"), 10, "the refusal")
        (said,) = toasts(app, "nothing was sent")
        assert "over the 4.0 MB a request to Cockpit may take" in said
        assert composer.text == huge
        assert await app.engine.rows(session) == []
        composer.text = ""
        big = lines(DRAFT_BYTES + 100_000)  # past a draft's bound, under a request's: it goes
        await paste(app, pilot, big)
        await pilot.press("enter")
        await wait_until(lambda: composer.text == "", 10, "the prompt to go")

        async def stored() -> bool:
            return [row.text for row in await app.engine.rows(session) if row.kind == "user"] == [
                big
            ]

        await wait_until(stored, 30, "the big prompt to be stored whole")


# -- pictures ------------------------------------------------------------------------------------


def test_a_draft_past_the_bound_pictured(snap_compare: Snap, tmp_path: Path) -> None:
    """The prompt holds the pasted draft (its last lines), and the toast says it is not
    saved."""
    app = app_with(tmp_path)

    async def paste_past_the_bound(pilot: Any) -> None:
        await ready(app)
        await settle(pilot)
        await paste(app, pilot, lines(DRAFT_BYTES + 1000))
        await wait_until(lambda: toasts(app, "Cockpit keeps: it stays"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=paste_past_the_bound)


def test_a_prompt_past_the_bound_pictured(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Enter on a prompt past a request's bound: the prompt keeps it, and the toast says
    nothing was sent and what to do instead."""
    monkeypatch.setattr(bounds, "REQUEST_BYTES", 64 * 1024)
    app = app_with(tmp_path)

    async def send_past_the_bound(pilot: Any) -> None:
        await ready(app)
        await settle(pilot)
        await paste(app, pilot, lines(100 * 1024))
        await pilot.press("enter")
        await wait_until(lambda: toasts(app, "nothing was sent"))
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=send_past_the_bound)
