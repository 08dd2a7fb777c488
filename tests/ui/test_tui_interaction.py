"""Pilot tests of the interaction layer: inline permissions, the inbox, policies, cancel,
mentions, completion, modes, tool cards, plans, export and attention."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Group
from textual.events import AppBlur

from cockpit.api import FramesEvent, Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble
from cockpit.ui.composer import CompletionMenu, Composer
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.screens.questions import OptionsScreen
from cockpit.ui.screens.reading import PlanScreen
from cockpit.ui.tool_card import ToolCard
from cockpit.ui.transcript import TranscriptView
from store import chunk_from_update
from tests.support.ui_helpers import (
    burst,
    focused_composer,
    local,
    make_app,
    ready,
    send,
    wait_until,
)

SIZE = (120, 40)


def decisions(rows: Iterable[Any]) -> list[str]:
    return [r.text for r in rows if r.kind == "permission"]


async def test_an_inline_request_is_answered_with_a_key(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await pilot.pause()
        assert isinstance(app.focused, PermissionPrompt)
        await pilot.press("1")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and not app.query(PermissionPrompt)
        )
        rows = await app.engine.rows(session)
        assert decisions(rows) == ["Allowed once: Write demo-notes.md"]
        assert rows[-1].kind == "agent" and "allowed once" in rows[-1].text.lower()
        assert isinstance(app.focused, Composer)


async def test_answering_from_the_inbox_reaches_the_right_agent(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        sessions = [app.current or ""]
        for _ in range(2):
            record = await app.engine.create_session("demo", app.folder)
            sessions.append(record.id)
        await app.sessions.reload()
        turns = [asyncio.create_task(app.engine.prompt(s, "permission")) for s in sessions]
        await wait_until(lambda: len(app.engine.pending_permissions()) == 3)
        await pilot.press("ctrl+o")
        await pilot.pause()
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        assert len(inbox.items) == 3
        target = inbox.items[1]
        assert target.request is not None
        await pilot.press("down", "3")  # the agent's third option: Reject
        await wait_until(lambda: len(app.engine.pending_permissions()) == 2)
        # The open inbox follows: two requests left (the answered session's turn may
        # already have finished and wait there as unread).
        assert sum(item.request is not None for item in inbox.items) == 2
        rows = await app.engine.rows(target.session)
        assert decisions(rows) == ["Rejected: Write demo-notes.md"]
        for other in (s for s in sessions if s != target.session):
            assert decisions(await app.engine.rows(other)) == []
        await pilot.press("escape")
        for session in sessions:
            if session != target.session:  # its turn goes on to say what was rejected
                await app.engine.cancel(session)
        await asyncio.wait_for(asyncio.gather(*turns), 10)
        rows = await app.engine.rows(target.session)
        assert "rejected" in rows[-1].text.lower()


async def test_allow_always_is_not_asked_again_and_a_policy_is_recorded(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await pilot.pause()
        await pilot.press("2")  # Always allow
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await send(app, pilot, "permission")
        await wait_until(
            lambda: (
                app.engine.status(session) == Status.READY
                and len(decisions(app.query_one(TranscriptView).model)) == 2
            )
        )
        assert not app.query(PermissionPrompt)
        await send(app, pilot, "/policy execute allow")
        await wait_until(
            lambda: (
                ((app.records[session].info or {}).get("policy") or {}).get("execute") == "allow"
            )
        )
        await send(app, pilot, "tools")
        await wait_until(
            lambda: (
                app.engine.status(session) == Status.READY
                and len(decisions(app.query_one(TranscriptView).model)) == 4
            )
        )
        rows = await app.engine.rows(session)
        assert decisions(rows) == [
            "Always allowed: Write demo-notes.md",
            "Always allowed: Write demo-notes.md (remembered from an earlier 'always')",
            "Always allowed: Write demo-notes.md (remembered from an earlier 'always')",
            "Allowed once: Run a command (session policy: execute = allow)",
        ]


async def test_cancel_while_a_request_is_pending(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        app.query_one(Composer).focus()
        await pilot.press("escape")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and not app.query(PermissionPrompt)
        )
        rows = await app.engine.rows(session)
        assert decisions(rows) == [
            "Cancelled: Write demo-notes.md (the turn was cancelled before an answer)"
        ]


def app_in_project(tmp_path: Path, files: dict[str, str]) -> tuple[CockpitApp, Path]:
    """An app on a project folder holding `files` (name: text), and that folder."""
    project = tmp_path / "project"
    project.mkdir()
    for name, text in files.items():
        (project / name).write_text(text)
    return make_app(tmp_path, project), project


async def test_a_mentioned_file_reaches_the_agent(tmp_path: Path) -> None:
    app, project = app_in_project(tmp_path, {"notes.md": "twelve chars"})
    async with app.run_test(size=SIZE) as pilot:
        session, composer = await focused_composer(app)
        await pilot.press(*"look at @not")
        await wait_until(lambda: app.query_one(CompletionMenu).display)
        await pilot.press("tab")
        assert composer.text == "look at @notes.md "
        await pilot.press("enter")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and bool(app.query(AgentBubble))
        )
        reply = app.query(AgentBubble)[0].text
        assert "I received 1 mentioned file(s)" in reply
        assert f"file://{project / 'notes.md'}" in reply and "(12 characters)" in reply


async def test_tab_completes_the_word_as_typed_when_keys_come_faster_than_the_menu(
    tmp_path: Path,
) -> None:
    """Keys in one burst, as a fast typist's arrive: Tab right after a letter completes
    the word with that letter (it used to accept the menu of the word before it, over
    that word: `@notes.md t`), and Tab before any menu came completes too; on a word
    nothing completes, Tab leaves the prompt as before."""
    app, _ = app_in_project(tmp_path, {"notes.md": "twelve chars", "nothing.txt": ""})
    async with app.run_test(size=SIZE) as pilot:
        _, composer = await focused_composer(app)
        menu = app.query_one(CompletionMenu)
        await pilot.press(*"look at @no")
        await wait_until(lambda: menu.display and menu.option_count == 2, what="@no's menu")
        burst(app, "t", "e", "tab")
        await wait_until(lambda: composer.text == "look at @notes.md ", what="@note completed")
        assert not menu.display and app.focused is composer
        burst(app, *" and @nothi", "tab")
        await wait_until(lambda: composer.text.endswith(" and @nothing.txt "), what="@nothi")
        assert composer.text == "look at @notes.md  and @nothing.txt "
        assert app.focused is composer
        burst(app, *"@zzz", "tab")  # nothing to complete: Tab moves on, as ever
        await wait_until(lambda: app.focused is not composer, what="Tab to leave the prompt")
        assert composer.text.endswith(" @zzz")


async def test_slash_completion_lists_agent_and_cockpit_commands(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        await wait_until(lambda: bool(app.records[app.current or ""].commands))
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press("/")
        menu = app.query_one(CompletionMenu)
        await wait_until(lambda: menu.display)
        labels = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
        assert any(label.startswith("/tour") for label in labels)
        assert any(label.startswith("/new") for label in labels)
        await pilot.press(*"ren", "tab")
        assert composer.text == "/rename "
        await pilot.press(*"Better name", "enter")
        await wait_until(lambda: app.records[app.current or ""].title == "Better name")


async def test_shift_tab_cycles_modes_and_the_options_screen_sets_one(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        app.query_one(Composer).focus()
        await pilot.press("shift+tab")
        await wait_until(
            lambda: (app.records[session].modes or {}).get("currentModeId") == "accept"
        )
        assert "mode: Accept edits" in str(app.query_one("#status").render())
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert isinstance(app.screen, OptionsScreen)
        labels = [c.label for c in app.screen.choices]
        assert "Model: Smart" in labels
        app.screen.query_one("#choices").highlighted = labels.index("Model: Smart")  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_until(
            lambda: any(
                o.get("currentValue") == "demo-smart"
                for o in app.records[session].config_options or ()
            )
        )
        assert "model: Smart" in str(app.query_one("#status").render())


async def test_tool_cards_open_to_show_a_diff_and_terminal_output(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        session = await ready(app)
        await app.engine.set_session_policy(session, "edit", "allow")
        await app.engine.set_session_policy(session, "execute", "allow")
        await send(app, pilot, "tools")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and len(app.query(ToolCard)) == 3
        )
        read, edit, run = app.query(ToolCard)
        await wait_until(
            lambda: all(card.size.height == 1 for card in (read, edit, run)), what="three folded"
        )
        edit.focus()
        await pilot.press("enter")
        await wait_until(lambda: edit.size.height > 3, what="the edit card open")
        assert edit.expanded
        run.focus()
        await pilot.press("enter")

        def rendered() -> str:
            return app.export_screenshot().replace("&#160;", " ")

        await wait_until(lambda: "hello from the terminal" in rendered(), what="the output")
        assert "exit 0" in rendered()


async def test_the_plan_from_the_rail_and_an_export(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "plan")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and bool(app.records[session].title)
        )
        await wait_until(lambda: any(b.kind == "plan" for b in app.query_one(TranscriptView).model))
        app.query_one("#rail").focus()
        await pilot.press("p")
        await wait_until(lambda: isinstance(app.screen, PlanScreen))
        assert isinstance(app.screen, PlanScreen)
        assert len(app.screen.lines) == 3 and all(
            line.startswith("[x]") for line in app.screen.lines
        )
        await pilot.press("escape")
        await send(app, pilot, "/export plan.md")
        await wait_until(lambda: (app.folder / "plan.md").exists())
        assert "**Plan**" in (app.folder / "plan.md").read_text()


async def test_a_session_off_screen_that_needs_you_rings_and_notifies(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app)
        other = await app.engine.create_session("demo", app.folder, title="elsewhere")
        await app.sessions.reload()
        app.post_message(AppBlur())
        await pilot.pause()
        turn = asyncio.create_task(app.engine.prompt(other.id, "permission"))
        await wait_until(lambda: any("\x1b]9;" in s for s in app.sent_sequences))
        sequences = "".join(app.sent_sequences)
        assert "\x1b]9;elsewhere: asks: Write demo-notes.md\x07" in sequences
        assert "\x1b]2;Cockpit (1 waiting)\x07" in sequences
        await app.engine.cancel(other.id)
        await asyncio.wait_for(turn, 10)


async def test_a_file_created_later_can_be_mentioned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, project = app_in_project(tmp_path, {"old.md": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await focused_composer(app)
        await pilot.press(*"@ol")
        menu = app.query_one(CompletionMenu)
        await wait_until(lambda: menu.display)
        (project / "fresh.md").write_text("y")
        files = local(app)._files
        files.refresh = 0.0  # the next search rebuilds the index behind the one that answers
        await pilot.press("backspace", "backspace", *"fre")
        await app.workers.wait_for_complete()  # the search that started the rebuild
        await wait_until(lambda: not files._rebuilds, what="the index rebuilt in the engine")
        await pilot.press("h")

        def offered() -> list[str]:
            return [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]

        await wait_until(lambda: menu.display and any("fresh.md" in o for o in offered()))


async def test_a_tool_card_shows_an_agents_odd_content_without_links_or_a_crash(
    tmp_path: Path,
) -> None:
    """A tool call whose content was a number ended the app when its card opened, and a
    Markdown link in a tool's text became a terminal hyperlink to the agent's address
    (replies already show links as text)."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        session = await ready(app)
        link = {"type": "text", "text": "see [the docs](http://agent.example/x) now"}
        for number, content in enumerate([7, [{"type": "content", "content": link}]]):
            frames = await local(app).store.apply(
                chunk_from_update(
                    session,
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": f"t{number}",
                        "title": f"tool {number}",
                        "content": content,
                    },
                )
            )
            local(app)._emit(FramesEvent(session, tuple(frames)))
        await wait_until(lambda: len(app.query(ToolCard)) == 2)
        odd, linked = app.query(ToolCard)
        for card in (odd, linked):
            card.focus()
            await pilot.press("enter")
            await pilot.pause()
        assert app.is_running and odd.expanded and linked.expanded
        lines = app.console.render_lines(Group(*linked._body(80)), pad=False)
        segments = [segment for line in lines for segment in line]
        assert "the docs" in "".join(segment.text for segment in segments)
        assert not any(segment.style and segment.style.link for segment in segments)
