"""Pictures of the habits from Claude Code (issue 33, item 5) at 80x24, the size of a
default terminal over SSH: the Ctrl+R search of earlier prompts, and the `/` completion
listing Cockpit's `/help` and the agent's, offered as `//help`. Stored without an agent,
so that every run draws the same picture."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.engine.core import Engine
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import CompletionMenu, Composer
from store import chunk_from_update
from store.workload import text_update
from tests.snapshots.test_tui_interaction_snapshots import calm, fixed_folder
from tests.support.ui_helpers import burst, fill_now, make_app, wait_until

Snap = Callable[..., bool]
SIZE = (80, 24)
PROMPTS = (
    "explain the session table",
    "write a plan for the export",
    "now the table of contents, please",
    "and a test for it",
)
GEMINI_COMMANDS = (
    {"name": "help", "description": "For help on gemini-cli"},
    {"name": "stats", "description": "Check session stats"},
    {"name": "compress", "description": "Compresses the context"},
)


def stored_session(
    tmp_path: Path, name: str, commands: tuple[dict[str, str], ...] = ()
) -> CockpitApp:
    """An app on one closed session: each of PROMPTS answered "Done.", and the agent's
    commands as it announced them."""
    folder = fixed_folder(name)

    async def build(engine: Engine) -> None:
        record = await engine.create_session("demo", folder, title=name)
        for prompt in PROMPTS:
            await engine.store.begin_turn(record.id, prompt)
            await engine.store.apply(
                chunk_from_update(record.id, text_update("agent_message_chunk", "Done."))
            )
            await engine.store.end_turn(record.id)
        await engine.store.update_session(record.id, status="closed", commands=list(commands))

    fill_now(tmp_path / "home", build)
    return make_app(tmp_path, folder)


def test_the_prompt_search(snap_compare: Snap, tmp_path: Path) -> None:
    """Ctrl+R then `table`: the query in the prompt's border, the prompts that hold it
    above it (newest first, the letters marked, the chosen one highlighted), the draft
    untouched."""
    app = stored_session(tmp_path, "search")

    async def search(pilot: Any) -> None:
        composer = app.query_one(Composer)
        await wait_until(lambda: len(composer.prompts.entries) == len(PROMPTS))
        composer.focus()
        burst(app, *"draft", "ctrl+r", *"table")
        await wait_until(lambda: composer.search is not None and composer.search.query == "table")
        await calm(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=search)


def test_completion_lists_both_helps(snap_compare: Snap, tmp_path: Path) -> None:
    """`/he` with an agent that has its own `/help`: Cockpit's marked "cockpit:", the
    agent's right after it as `//help`, then `/theme` (it holds "he")."""
    app = stored_session(tmp_path, "twins", GEMINI_COMMANDS)

    async def complete(pilot: Any) -> None:
        await wait_until(lambda: app.current is not None)
        app.query_one(Composer).focus()
        burst(app, *"/he")
        await wait_until(lambda: app.query_one(CompletionMenu).display)
        await calm(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=complete)
