"""Snapshot tests of the interaction layer: tool cards, diffs, terminal cards, the inline
permission prompt, the inbox, the plan, the completion popups and the options selector.

Cards and plans are stored without an agent (deterministic); prompts, the inbox, popups and
the selector come from real demo agents, each in its own fixed folder so the pictures show
the same paths in every run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cockpit.engine.core import Engine
from cockpit.paths import config_dir
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.questions import ConfirmScreen, OptionsScreen
from cockpit.ui.screens.reading import PlanScreen, TextScreen
from cockpit.ui.tool_card import ToolCard
from store import chunk_from_update
from tests.support.git_repos import make_repo
from tests.support.snapshot_folders import snapshot_folder
from tests.support.ui_helpers import (
    NOW,
    fill_now,
    make_app,
    ready,
    repaints_done,
    send,
    ticking,
    wait_until,
)

Snap = Callable[..., bool]

OLD_SOURCE = '''import os


def greet(name):
    """Say hello."""
    print("Hello, " + name)
    return None


def main():
    greet(os.environ.get("USER", "world"))
'''

NEW_SOURCE = '''import os
import sys


def greet(name: str, *, loud: bool = False) -> str:
    """Say hello, louder when asked."""
    message = f"Hello, {name}!"
    return message.upper() if loud else message


def main() -> None:
    print(greet(os.environ.get("USER", "world"), loud="--loud" in sys.argv))
'''


def fixed_folder(name: str) -> Path:
    """A fresh folder whose path is the same in every run (it shows in the pictures)."""
    return snapshot_folder(name)


async def settle(pilot: Any) -> None:
    await pilot.app.workers.wait_for_complete()
    await calm(pilot)


async def calm(pilot: Any) -> None:
    """Let the screen catch up without waiting for workers (a turn waiting on the user is
    a worker that will not finish)."""
    await repaints_done(pilot.app)
    for _ in range(3):
        await pilot.pause(0.05)


def tool_call(call_id: str, kind: str, title: str, status: str, **more: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "kind": kind,
        "title": title,
        "status": status,
        **more,
    }


def stored(
    tmp_path: Path, folder: Path, updates: list[dict[str, Any]], prompt: str = "Fix the greeting"
) -> CockpitApp:
    """An app on one closed session whose only turn is `prompt` and these ACP updates."""

    async def build(engine: Engine) -> None:
        record = await engine.create_session("demo", folder, title="tools")
        await engine.store.begin_turn(record.id, prompt)
        for update in updates:
            await engine.store.apply(chunk_from_update(record.id, update))
        await engine.store.end_turn(record.id)
        await engine.store.update_session(record.id, status="closed")

    fill_now(tmp_path / "home", build)
    return make_app(tmp_path, folder)


def edit_session(tmp_path: Path) -> CockpitApp:
    folder = fixed_folder("edit")
    path = str(folder / "greet.py")
    return stored(
        tmp_path,
        folder,
        [
            tool_call(
                "edit-1",
                "edit",
                "Edit greet.py",
                "completed",
                locations=[{"path": path, "line": 4}],
                content=[
                    {"type": "diff", "path": path, "oldText": OLD_SOURCE, "newText": NEW_SOURCE}
                ],
            )
        ],
    )


async def open_cards(pilot: Any) -> None:
    """Focus the last tool card and open it."""
    await settle(pilot)
    card = pilot.app.query(ToolCard).last()
    card.focus()
    await pilot.press("enter")
    await settle(pilot)


def test_a_tool_card_in_each_status(snap_compare: Snap, tmp_path: Path) -> None:
    """Pending, running, done, failed (open by itself, with its error) and cancelled cards,
    one line each otherwise, with kinds, titles and locations with line numbers."""
    folder = fixed_folder("statuses")
    app = stored(
        tmp_path,
        folder,
        [
            tool_call(
                "t1",
                "read",
                "Read store.py",
                "completed",
                locations=[{"path": str(folder / "store.py"), "line": 120}],
            ),
            tool_call("t2", "search", "Search for 'fold'", "completed"),
            tool_call("t3", "fetch", "Fetch https://example.org/spec", "cancelled"),
            tool_call(
                "t4",
                "execute",
                "Run pytest -q",
                "failed",
                content=[
                    {
                        "type": "content",
                        "content": {
                            "type": "text",
                            "text": "2 failed, 40 passed\n\n`test_fold.py::test_overlap` failed",
                        },
                    }
                ],
            ),
            tool_call("t5", "think", "Plan the change", "in_progress"),
            tool_call("t6", "edit", "Edit fold.py", "pending"),
        ],
    )
    assert snap_compare(app, terminal_size=(100, 30), run_before=settle)


def test_an_edit_diff_unified(snap_compare: Snap, tmp_path: Path) -> None:
    """A narrow terminal shows an opened edit as a unified, highlighted diff."""
    assert snap_compare(edit_session(tmp_path), terminal_size=(100, 36), run_before=open_cards)


def test_an_edit_diff_side_by_side(snap_compare: Snap, tmp_path: Path) -> None:
    """A wide terminal shows the same edit side by side."""
    assert snap_compare(edit_session(tmp_path), terminal_size=(180, 36), run_before=open_cards)


def test_a_terminal_card(snap_compare: Snap, tmp_path: Path) -> None:
    """A command's card opened: the output's last lines and its exit status."""
    folder = fixed_folder("terminal")
    output = "".join(f"test_{n:02d} ... ok\n" for n in range(1, 9)) + "8 passed in 0.42s\n"
    app = stored(
        tmp_path,
        folder,
        [
            tool_call(
                "run-1",
                "execute",
                "Run the tests",
                "completed",
                content=[{"type": "terminal", "terminalId": "term-1"}],
            ),
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "run-1",
                "terminalOutput": {
                    "term-1": {
                        "output": output,
                        "truncated": False,
                        "exitStatus": {"exitCode": 0, "signal": None},
                        "command": ["pytest", "-v"],
                    }
                },
            },
        ],
        prompt="Run the tests",
    )
    assert snap_compare(app, terminal_size=(100, 30), run_before=open_cards)


def live_app(tmp_path: Path, name: str, *, ticking_clock: bool = False) -> CockpitApp:
    folder = fixed_folder(name)
    (folder / "README.md").write_text("# Project\n")
    (folder / "src").mkdir()
    for file_name in ("session_store.py", "session_view.py", "settings.py"):
        (folder / "src" / file_name).write_text("pass\n")
    return make_app(tmp_path, folder, engine_clock=ticking() if ticking_clock else lambda: NOW)


def test_an_inline_permission_prompt(snap_compare: Snap, tmp_path: Path) -> None:
    """The demo agent asks to write a file: its options on keys 1-3, the tool call and the
    diff it wants to make, inline in the session."""
    app = live_app(tmp_path, "permission")

    async def ask(pilot: Any) -> None:
        await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 34), run_before=ask)


def test_the_inbox_with_three_sessions(snap_compare: Snap, tmp_path: Path) -> None:
    """Three demo sessions each wait for an answer; Ctrl+O lists them oldest first."""
    app = live_app(tmp_path, "inbox", ticking_clock=True)

    async def three(pilot: Any) -> None:
        first = await ready(app)
        await app.engine.rename(first, "alpha")
        sessions = [first]
        for title in ("beta", "gamma"):
            record = await app.engine.create_session("demo", app.folder, title=title)
            sessions.append(record.id)
        for count, session in enumerate(sessions, 1):
            pilot.app.run_worker(app.engine.prompt(session, "permission"))
            await wait_until(lambda: len(app.engine.pending_permissions()) == count)  # noqa: B023
        await calm(pilot)
        await pilot.press("ctrl+o")
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=three)


def test_the_inbox_at_80x24_previews_the_highlighted_question(
    snap_compare: Snap, tmp_path: Path
) -> None:
    """At 80x24 the rows have no room for the options: under the list, the highlighted
    row's question (beta's, after a Down) with what each key answers."""
    app = live_app(tmp_path, "inbox-small", ticking_clock=True)

    async def three(pilot: Any) -> None:
        first = await ready(app)
        await app.engine.rename(first, "alpha")
        sessions = [first]
        for title in ("beta", "gamma"):
            record = await app.engine.create_session("demo", app.folder, title=title)
            sessions.append(record.id)
        for count, session in enumerate(sessions, 1):
            pilot.app.run_worker(app.engine.prompt(session, "permission"))
            await wait_until(lambda: len(app.engine.pending_permissions()) == count)  # noqa: B023
        await calm(pilot)
        await pilot.press("ctrl+o", "down")
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=three)


def test_a_form_filled_in_the_inbox_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    """The demo's form waits in the inbox beside a question; Enter went into it and a
    name is being typed: the form scrolls under the list, the dialog fits 80x24."""
    app = live_app(tmp_path, "inbox-form", ticking_clock=True)

    async def asked(pilot: Any) -> None:
        first = await ready(app)
        await app.engine.rename(first, "alpha")
        second = (await app.engine.create_session("demo", app.folder, title="beta")).id
        for count, (session, word) in enumerate(((first, "form"), (second, "permission")), 1):
            pilot.app.run_worker(app.engine.prompt(session, word))
            await wait_until(lambda: len(app.engine.pending_permissions()) == count)  # noqa: B023
        await calm(pilot)
        await pilot.press("ctrl+o")
        await wait_until(lambda: bool(pilot.app.screen.query(FormPrompt)))
        await pilot.press("enter", "ctrl+u", "a", "t", "l", "a", "s", "tab", "tab")
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=asked)


def test_the_plan(snap_compare: Snap, tmp_path: Path) -> None:
    """A plan in the transcript and, from the rail's `p`, on its own screen with statuses."""
    folder = fixed_folder("plan")
    entries = [
        {"content": "Read the fold rules", "priority": "high", "status": "completed"},
        {"content": "Write the failing test", "priority": "high", "status": "in_progress"},
        {"content": "Fix the overlap rule", "priority": "medium", "status": "pending"},
    ]
    app = stored(tmp_path, folder, [{"sessionUpdate": "plan", "entries": entries}])

    async def show(pilot: Any) -> None:
        await calm(pilot)
        pilot.app.query_one("#rail").focus()
        await pilot.press("p")
        await wait_until(lambda: isinstance(pilot.app.screen, PlanScreen))
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=show)


def test_editing_the_plan(snap_compare: Snap, tmp_path: Path) -> None:
    """`e` in the plan view at 80x24: the plan as a checklist to edit, the marks explained."""
    folder = fixed_folder("plan-edit")
    entries = [
        {"content": "Read the fold rules", "status": "completed"},
        {"content": "Write the failing test", "status": "in_progress"},
    ]
    app = stored(tmp_path, folder, [{"sessionUpdate": "plan", "entries": entries}])

    async def edit(pilot: Any) -> None:
        await calm(pilot)
        pilot.app.query_one("#rail").focus()
        await pilot.press("p", "e")
        await wait_until(lambda: getattr(pilot.app.screen, "editing", False))
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=edit)


def test_the_slash_popup(snap_compare: Snap, tmp_path: Path) -> None:
    """`/` lists the agent's commands (with descriptions and hints) and Cockpit's own."""
    app = live_app(tmp_path, "slash")

    async def popup(pilot: Any) -> None:
        session = await ready(app)
        await wait_until(lambda: bool(app.records[session].commands))
        app.query_one(Composer).focus()
        await pilot.press("/")
        await wait_until(lambda: app.query_one(CompletionMenu).display)
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=popup)


def test_the_mcp_servers(snap_compare: Snap, tmp_path: Path) -> None:
    """`/mcp` at 80x24: the servers the agent was handed, and one left out with why."""
    app = live_app(tmp_path, "mcp")
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "mcp.toml").write_text(
        '[servers.files]\ncommand = "files-mcp"\n\n'
        '[servers.docs]\nurl = "https://docs.example.com/mcp"\n'
    )

    async def listed(pilot: Any) -> None:
        await ready(app)
        await send(app, pilot, "/mcp")
        await wait_until(lambda: isinstance(pilot.app.screen, TextScreen))
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=listed)


def test_approving_a_repository_s_mcp_servers(snap_compare: Snap, tmp_path: Path) -> None:
    """`/mcp approve` at 80x24: what the repository's `.cockpit.toml` asks agents be
    handed, each server whole, and that Cockpit does not confine them."""
    app = live_app(tmp_path, "mcp-approve")
    make_repo(
        app.folder,
        {
            ".cockpit.toml": '[mcp.servers.docs]\ncommand = "npx"\nargs = ["docs-mcp"]\n\n'
            '[mcp.servers.tickets]\nurl = "https://tickets.example.com/mcp"\n'
        },
    )

    async def asked(pilot: Any) -> None:
        await ready(app)
        await send(app, pilot, "/mcp approve")
        await wait_until(lambda: isinstance(pilot.app.screen, ConfirmScreen))
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=asked)


def test_the_mention_popup(snap_compare: Snap, tmp_path: Path) -> None:
    """`@ses` lists matching files under the session's root, matched letters marked."""
    app = live_app(tmp_path, "mention")

    async def popup(pilot: Any) -> None:
        await ready(app)
        app.query_one(Composer).focus()
        await pilot.press(*"read @ses")
        await wait_until(lambda: app.query_one(CompletionMenu).display)
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=popup)


def test_the_mode_selector(snap_compare: Snap, tmp_path: Path) -> None:
    """Ctrl+T: the agent's modes and config options, the current ones marked."""
    app = live_app(tmp_path, "modes")

    async def selector(pilot: Any) -> None:
        await ready(app)
        await pilot.press("ctrl+t")
        await wait_until(lambda: isinstance(pilot.app.screen, OptionsScreen))
        await calm(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=selector)


# --- 80x24, the size of a default terminal over SSH ----------------------------------------


def test_a_permission_prompt_with_a_folded_diff_at_80x24(
    snap_compare: Snap, tmp_path: Path
) -> None:
    """The demo agent asks to overwrite a 62-line file with its 6-line notes: the folded
    diff sums up the removed lines and shows every line it would write; `f` is offered."""
    app = live_app(tmp_path, "permission-80")
    assert app.folder is not None
    notes = "".join(f"line {n} of my own notes\n" for n in range(1, 63))
    (Path(app.folder) / "demo-notes.md").write_text(notes)

    async def ask(pilot: Any) -> None:
        await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await calm(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ask)


def test_tool_cards_at_80x24(snap_compare: Snap, tmp_path: Path) -> None:
    """Collapsed cards in a narrow terminal: paths relative to the session's folder (so the
    file name shows), a finished command's exit code, a failed one open with its code."""
    folder = fixed_folder("cards-80")

    def command(call_id: str, title: str, status: str, code: int, output: str) -> list[Any]:
        terminal = f"term-{call_id}"
        return [
            tool_call(
                call_id,
                "execute",
                title,
                status,
                content=[{"type": "terminal", "terminalId": terminal}],
            ),
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "terminalOutput": {
                    terminal: {
                        "output": output,
                        "truncated": False,
                        "exitStatus": {"exitCode": code, "signal": None},
                    }
                },
            },
        ]

    app = stored(
        tmp_path,
        folder,
        [
            tool_call(
                "r1",
                "read",
                "Read README.md",
                "completed",
                locations=[{"path": str(folder / "README.md")}],
            ),
            tool_call(
                "r2",
                "read",
                "Read store.py",
                "completed",
                locations=[{"path": str(folder / "src" / "store.py"), "line": 120}],
            ),
            tool_call(
                "e1",
                "edit",
                "Edit greet.py",
                "completed",
                locations=[{"path": str(folder / "greet.py"), "line": 4}],
                content=[
                    {
                        "type": "diff",
                        "path": str(folder / "greet.py"),
                        "oldText": OLD_SOURCE,
                        "newText": NEW_SOURCE,
                    }
                ],
            ),
            *command("c1", "Run the tests", "completed", 0, "8 passed in 0.42s\n"),
            *command("c2", "Run the linter", "failed", 2, "src/a.py:3: E501 line too long\n"),
        ],
    )
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)
