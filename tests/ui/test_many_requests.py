"""An agent that asks hundreds of permissions at once (issue 13 §3): the TUI shows one
prompt per session, however many wait (the rest are a count on it, and a list in the
inbox), answering the one shown brings the next, and Esc cancels the turn while the
requests still arrive, every one of them then recorded as cancelled. The agent is a real
subprocess (`tests/support/tiny_agent.py`, `ask-many`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual import events

from cockpit.api import PermissionEvent, Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.requests_on_screen import RequestsOnScreen
from cockpit.ui.status_line import StatusLine
from cockpit.ui.transcript import TranscriptView
from tests.engine.test_engine_restart import TINY
from tests.support.ui_helpers import handled_so_far, make_app, ready, send, wait_until

SIZE = (100, 30)
MANY = 300


def tiny_app(tmp_path: Path, folder: Path | None = None, **options: Any) -> CockpitApp:
    config = tmp_path / "home" / "config"
    config.mkdir(parents=True)
    (config / "agents.toml").write_text(
        f'[agents.tiny]\ncommand = ["{sys.executable}", "{TINY}"]\n'
    )
    return make_app(tmp_path, folder, agent="tiny", **options)


def decisions(rows: Iterable[Any]) -> list[str]:
    return [row.text for row in rows if row.kind == "permission"]


def shown(app: CockpitApp) -> PermissionPrompt | None:
    prompts = app.query(PermissionPrompt)
    return prompts.first() if prompts else None


def status_says(app: CockpitApp, words: str) -> bool:
    return any(words in part for part, _ in app.query_one("#status", StatusLine).parts)


async def test_many_requests_cost_one_prompt_and_answering_it_shows_the_next(
    tmp_path: Path,
) -> None:
    app = tiny_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, f"ask-many n={MANY}")
        await wait_until(lambda: app.engine.pending_count(session) == MANY, timeout=60)
        await wait_until(lambda: status_says(app, f"({MANY} requests)"), timeout=60)
        await pilot.pause()
        assert len(app.query(PermissionPrompt)) == 1  # one prompt, not one per request
        await wait_until(lambda: (p := shown(app)) is not None and p.waiting == MANY)
        first = shown(app)
        assert first is not None and first.request.title == "Delete file 0"
        assert f"{MANY - 1} more wait" in str(first.query_one(".hint").render())
        await pilot.pause()
        assert app.focused is first

        await pilot.press("1")  # Allow: the next one takes its place, with the keyboard
        await wait_until(lambda: (p := shown(app)) is not None and p is not first)
        second = shown(app)
        assert second is not None and second.request.title == "Delete file 1"
        assert len(app.query(PermissionPrompt)) == 1
        await wait_until(lambda: app.focused is second)
        await pilot.press("2")  # Reject
        await wait_until(
            lambda: (p := shown(app)) is not None and p.request.title == "Delete file 2"
        )
        assert app.engine.pending_count(session) == MANY - 2
        assert status_says(app, f"({MANY - 2} requests)")

        app.query_one(Composer).focus()
        await pilot.press("escape")  # cancels the turn: every request left gets its row
        await wait_until(lambda: app.engine.status(session) == Status.READY, timeout=60)
        await wait_until(lambda: not app.query(PermissionPrompt))
        rows = await app.engine.rows(session)
        said = decisions(rows)
        assert said[:2] == ["Allowed once: Delete file 0", "Rejected: Delete file 1"]
        assert len(said) == MANY
        cancelled = [f"Cancelled: Delete file {n} (the turn was cancelled before an answer)"
                     for n in range(2, MANY)]  # fmt: skip
        assert sorted(said[2:]) == sorted(cancelled)
        replies = [row.text for row in rows if row.kind == "agent"]
        assert replies[-1] == f"asked {MANY}: 1 allowed, {MANY - 2} cancelled"
        assert not app.engine.pending_permissions(session)


async def test_esc_cancels_the_turn_while_the_requests_still_arrive(tmp_path: Path) -> None:
    """Keys are posted, not pressed: a Pilot press waits for the app to be idle, and it is
    not while the requests arrive."""
    app = tiny_app(tmp_path)
    async with app.run_test(size=SIZE):
        session = await ready(app)
        asked: list[PermissionEvent] = []
        app.engine.subscribe(
            lambda event: (
                asked.append(event)
                if isinstance(event, PermissionEvent) and not event.resolved
                else None
            )
        )
        view = app.query_one(TranscriptView)
        composer = app.query_one(Composer)
        composer.text = f"ask-many n={MANY} gap=0.01"  # three seconds of requests
        composer.move_cursor(composer.document.end)
        composer.focus()
        app.post_message(events.Key("enter", "\r"))
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt))
        app.post_message(events.Key("escape", None))  # the prompt's Esc: to the composer
        await wait_until(lambda: isinstance(app.focused, Composer))
        before = len(asked)
        await wait_until(lambda: len(asked) >= before + 20)
        await handled_so_far(app)
        # more requests came and took nothing: the keyboard is where the user put it
        assert isinstance(app.focused, Composer)
        assert len(view.prompts) == len(app.query(PermissionPrompt)) == 1
        app.post_message(events.Key("escape", None))  # the composer's Esc: cancel the turn
        await wait_until(lambda: app.engine.status(session) == Status.CANCELLING, timeout=10)
        await wait_until(lambda: app.engine.status(session) == Status.READY, timeout=60)
        assert len(asked) < MANY  # the rest came after the cancel, answered as they came
        rows = await app.engine.rows(session)
        said = decisions(rows)
        assert len(said) == MANY
        assert all(text.startswith("Cancelled: Delete file ") for text in said)
        await wait_until(lambda: not app.query(PermissionPrompt))
        replies = [row.text for row in rows if row.kind == "agent"]
        assert replies[-1] == f"asked {MANY}: 0 allowed, {MANY} cancelled"


async def test_an_esc_from_the_question_holds_when_more_requests_come_before_it_lands(
    tmp_path: Path,
) -> None:
    """The Esc moves the keyboard on the next idle; a request that came just before
    showed the same question again, found the keyboard still on it and put it back there
    (under load, the Esc above failed one run in a few hundred)."""
    app = tiny_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        app.query_one(Composer).text = "ask-many n=2 gap=0"
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt))
        await wait_until(lambda: app.engine.pending_count(session) == 2)
        prompt = app.focused
        assert isinstance(prompt, PermissionPrompt)
        app.post_message(
            RequestsOnScreen.PermissionsChanged()
        )  # a request's news, ahead of the Esc's move
        prompt.action_leave()
        for _ in range(3):
            await pilot.pause()
        assert isinstance(app.focused, Composer)
        assert shown(app) is prompt  # the question stays on screen, unanswered
