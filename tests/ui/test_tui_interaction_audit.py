"""Pilot tests of what the interaction audit found: the permission prompt's `f` (a folded
diff shows what would be written, and unfolds), the `/` menu that scrolls to every
command, `/policy` checking what it is given and listing the rules, and the width at
which a card's diff goes side by side (as the README says)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console, RenderableType
from textual.geometry import Region

from cockpit.engine.core import Engine
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.composer import MENU_ROWS, CompletionMenu, Composer
from cockpit.ui.permission_prompt import PermissionPrompt, RequestDiff
from cockpit.ui.rail import SessionRail
from cockpit.ui.screens.reading import TextScreen
from cockpit.ui.tool_card import ToolCard
from cockpit.ui.transcript import TranscriptView
from store import chunk_from_update
from tests.support.ui_helpers import add_session, fill, make_app, ready, send, steady, wait_until

NOTES = [
    "+ # Demo notes",
    "+ Written by the Cockpit demo agent",
    "+ - It read a file, asked before this edit",
    "+ - Delete this file whenever you like.",
]
"""What the demo agent writes to demo-notes.md (the starts of its lines: long ones wrap)."""


def plain(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


async def test_f_in_the_prompt_shows_the_whole_diff(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    old = "".join(f"line {n} of my own notes\n" for n in range(1, 63))
    (project / "demo-notes.md").write_text(old)
    app = make_app(tmp_path, project)
    async with app.run_test(size=(80, 40)) as pilot:
        session = await ready(app)
        composer = app.query_one(Composer)
        composer.focus()
        composer.text = "permission"
        await pilot.press("enter")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1)
        await pilot.pause()
        prompt = app.query_one(PermissionPrompt)
        assert app.focused is prompt
        diff = prompt.query_one(RequestDiff)

        def shown() -> str:
            return plain(diff.render(), diff.content_size.width)

        def hint() -> str:
            return str(prompt.query_one(".hint").render())

        folded = await steady(pilot, shown)
        # What would be written is all there; the 62 old lines are summed up.
        assert all(line in folded for line in NOTES)
        assert "… 61 lines removed" in folded
        assert "line 62 of my own notes" not in folded
        assert "f whole diff" in hint()
        await pilot.press("f")
        whole = await steady(pilot, shown)
        assert "line 62 of my own notes" in whole
        assert "removed" not in whole and "more line" not in whole
        assert all(line in whole for line in NOTES)
        assert "f fold the diff" in hint()
        await pilot.press("f")
        assert await steady(pilot, shown) == folded
        assert app.engine.pending_permissions(session)  # `f` answers nothing
        await pilot.press("1")
        await wait_until(lambda: not app.query(PermissionPrompt))


async def test_the_slash_menu_scrolls_to_cockpits_own_commands(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app)
        await wait_until(lambda: bool(app.records[app.current or ""].commands))
        composer = app.query_one(Composer)
        menu = app.query_one(CompletionMenu)
        for accept in ("tab", "enter"):
            composer.focus()
            await pilot.press("/")
            await wait_until(lambda: menu.display and menu.option_count > MENU_ROWS)
            await pilot.pause()
            labels = [str(menu.get_option_at_index(i).prompt) for i in range(menu.option_count)]
            help_row = next(i for i, label in enumerate(labels) if label.startswith("/help "))
            assert help_row >= MENU_ROWS  # below the rows shown at first
            assert menu.scrollable_content_region.height == MENU_ROWS
            assert menu.scroll_offset.y == 0
            for _ in range(help_row):
                await pilot.press("down")
            await pilot.pause()
            assert menu.highlighted == help_row
            # The highlight scrolled into view.
            top = menu.scroll_offset.y
            assert top <= help_row < top + MENU_ROWS
            await pilot.press(accept)
            assert composer.text == "/help"
            composer.text = ""
            await wait_until(lambda: not menu.display)


async def test_policy_checks_its_rule_and_lists_the_rules_in_force(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    said: list[tuple[str, dict[str, Any]]] = []
    async with app.run_test(size=(100, 30)) as pilot:
        session = await ready(app)
        app.notify = lambda message, **options: said.append((str(message), options))  # type: ignore[method-assign]

        async def slash(text: str) -> tuple[str, dict[str, Any]]:
            count = len(said)
            await app.run_slash(session, *text[1:].partition(" ")[::2])
            await wait_until(lambda: len(said) > count)
            return said[-1]

        message, options = await slash("/policy exec allow")
        assert options.get("severity") == "error"
        assert "No tool kind 'exec'" in message and "execute" in message
        message, options = await slash("/policy edit sometimes")
        assert options.get("severity") == "error" and "allow, ask, reject" in message
        assert "policy" not in ((await app.engine.session(session)).info or {})

        async def rules() -> str:
            """The rules in force, on a screen of their own (lasting, not a toast)."""
            await app.run_slash(session, "policy", "")
            await wait_until(lambda: isinstance(app.screen, TextScreen))
            screen = app.screen
            assert isinstance(screen, TextScreen) and screen.heading == "Permission rules"
            await pilot.press("escape")
            await wait_until(lambda: not isinstance(app.screen, TextScreen))
            return screen.text

        assert (await rules()).splitlines()[:2] == [
            "allow: read (in the folder), search (in the folder), think",
            "ask: edit, delete, move, execute, fetch, switch_mode, other",
        ]
        message, _ = await slash("/policy edit allow")
        assert message == "This session: edit = allow"
        assert "edit (this session)" in (await rules()).splitlines()[0]
        message, _ = await slash("/policy edit")
        assert message == "This session: edit follows the global rule (ask)"
        await pilot.pause()


OLD = "".join(f"value_{n} = compute({n})\n" for n in range(12))
NEW = OLD.replace("compute(3)", "compute(3, cached=True)")


async def card_layout(tmp_path: Path, width: int, rail: bool) -> str:
    """ "split" or "unified": how an open edit card shows its diff in a terminal `width`
    columns wide, with the rail shown or hidden."""
    project = tmp_path / f"p{width}{rail}"
    project.mkdir()

    async def build(engine: Engine) -> None:
        record = await engine.create_session("demo", project, title="edit")
        await engine.store.begin_turn(record.id, "edit")
        path = str(project / "values.py")
        update = {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "kind": "edit",
            "title": "Edit values.py",
            "status": "completed",
            "content": [{"type": "diff", "path": path, "oldText": OLD, "newText": NEW}],
        }
        await engine.store.apply(chunk_from_update(record.id, update))
        await engine.store.end_turn(record.id)
        await engine.store.update_session(record.id, status="closed")

    home = tmp_path / f"home{width}{rail}"
    await fill(home / "home", build)
    app = make_app(home, project)
    async with app.run_test(size=(width, 40)) as pilot:
        await wait_until(lambda: bool(app.query(ToolCard)))
        if not rail:
            await pilot.press("ctrl+b")
        card = app.query(ToolCard).last()
        card.focus()
        await pilot.press("enter")
        await pilot.pause()
        text = plain(card.render(), card.content_size.width)
        assert "cached=True" in text
        return "split" if "│" in text else "unified"


async def test_diffs_go_side_by_side_where_the_readme_says(tmp_path: Path) -> None:
    """README: side by side from 158 terminal columns with the rail shown, 126 without."""
    assert await card_layout(tmp_path, 157, rail=True) == "unified"
    assert await card_layout(tmp_path, 158, rail=True) == "split"
    assert await card_layout(tmp_path, 125, rail=False) == "unified"
    assert await card_layout(tmp_path, 126, rail=False) == "split"


async def test_the_ansi_theme_shows_the_current_session_and_the_focused_bubble(
    tmp_path: Path,
) -> None:
    """cockpit-ansi paints no backgrounds: the rail's current session is underlined (the
    rail has no focus) and a focused bubble has the focus bar down its first column."""
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: Engine) -> None:
        await add_session(engine, project, "t", [("hi", "Hello **there**.")])

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(lambda: len(app.query(BubbleWidget)) == 2)
        app.theme = "cockpit-ansi"
        await pilot.pause()
        rail = app.query_one(SessionRail)
        assert not rail.has_focus and rail.highlighted == 0
        assert all(s.style and s.style.underline for s in rail.render_line(0) if s.text.strip())
        for bubble in app.query(BubbleWidget):
            first = Region(0, 0, bubble.size.width, 1)  # with the border, unlike render_line
            assert bubble.render_lines(first)[0].text[0] != "▌"
            bubble.focus()
            await pilot.pause()
            assert bubble.render_lines(first)[0].text[0] == "▌"


async def test_answering_a_request_leaves_the_transcript_at_its_end(tmp_path: Path) -> None:
    """The answered prompt is removed with the keyboard on it: Textual would hand the focus
    to the first bubble beside it and scroll the transcript to the top."""
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        session = await ready(app)
        await send(app, pilot, "hello")  # a long reply, so the transcript scrolls
        await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: bool(app.engine.pending_permissions(session)))
        await wait_until(lambda: isinstance(app.focused, PermissionPrompt))
        await pilot.press("1")
        await ready(app)
        await pilot.wait_for_scheduled_animations()  # past any scrolling animation
        view = app.query_one(TranscriptView)
        assert view.max_scroll_y > 20
        assert view.scroll_y >= view.max_scroll_y - 1
        assert isinstance(app.focused, Composer)
