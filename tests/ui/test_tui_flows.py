"""Pilot tests of the TUI's flows, with real demo-agent subprocesses and a real store."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events

from cockpit.api import Status
from cockpit.ui.app import CockpitApp
from cockpit.ui.bubbles import AgentBubble, BubbleWidget, ThoughtBubble
from cockpit.ui.composer import Composer
from cockpit.ui.rail import SessionRail
from cockpit.ui.transcript import BUBBLE_LIMIT, TranscriptView
from store.store import Store
from tests.support.ui_helpers import add_rows, add_session, fill, local, make_app, send, wait_until

SIZE = (120, 40)


def transcript(app: CockpitApp) -> TranscriptView:
    return app.query_one(TranscriptView)


def shown(app: CockpitApp) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in transcript(app).model]


async def test_first_start_creates_a_session_and_a_prompt_streams(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: len(app.records) == 1 and app.engine.status(app.current or "") == Status.READY
        )
        await send(app, pilot, "think please")
        session = app.current or ""
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and len(transcript(app).model) == 3
        )
        await pilot.pause()
        rows = await app.engine.rows(session)
        assert shown(app) == [(r.kind, r.text) for r in rows]
        assert [r.kind for r in rows] == ["user", "thought", "agent"]
        assert not any(w.live for w in app.query(AgentBubble)), "a finished reply is cheap"
        assert app.records[session].title == "think please"
        status = str(app.query_one("#status").render())
        assert (
            "Cockpit demo agent" in status
            and "mode: Ask before edits" in status
            and "model: Fast" in status
        )


async def test_switch_rename_close_and_reopen(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: object) -> None:
        await add_session(engine, project, "first", [("one", "reply one")])  # type: ignore[arg-type]
        await add_session(engine, project, "second", [("two", "reply two")])  # type: ignore[arg-type]

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        first_shown = shown(app)
        await pilot.press("ctrl+down")
        await wait_until(lambda: shown(app) != first_shown)
        assert {shown(app)[0][1], first_shown[0][1]} == {"one", "two"}
        # rename
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("ctrl+a", *"Renamed", "enter")
        await wait_until(
            lambda: (
                app.records[app.current or ""].title is not None
                and "Renamed" in (app.records[app.current or ""].title or "")
            )
        )
        # prompt starts the agent; close stops it; the transcript stays and reopens
        session = app.current or ""
        await send(app, pilot, "hello")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and len(shown(app)) == 4
        )
        await pilot.press("f4")
        await wait_until(lambda: app.engine.status(session) == Status.CLOSED)
        before = shown(app)
        await pilot.press("ctrl+up")
        await wait_until(lambda: app.current != session)
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == session)
        assert shown(app) == before
        live = local(app)._live[session]
        assert not live.running  # reopened from the store, no agent


async def test_a_prompt_typed_the_moment_a_session_closes_starts_it_again(
    tmp_path: Path,
) -> None:
    """F4 mid-reply, then a prompt with no pause between the keys: the screen takes the
    keys while the stop runs, and the prompt starts a new agent once the stop is over
    (run side by side, the stop waited forever for the new agent: the app froze)."""
    app = make_app(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: app.current is not None)
        session = app.current or ""
        await send(app, pilot, "slow")
        await wait_until(lambda: app.engine.status(session) == Status.WORKING)
        first = local(app)._live[session].process
        composer = app.query_one(Composer)
        composer.focus()
        await pilot.press("f4", *"hello", "enter")
        await wait_until(lambda: len(shown(app)) >= 4 and shown(app)[-1][0] == "agent", 30)
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30)
        live = local(app)._live[session]
        assert live.process is not first and live.running
        assert first is not None and first.returncode is not None
        user_rows = [text for kind, text in shown(app) if kind == "user"]
        assert user_rows[-1] == "hello"


async def test_cancel_with_escape(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        await send(app, pilot, "slow")
        await wait_until(
            lambda: any(b.kind == "agent" and len(b.text) > 20 for b in transcript(app).model)
        )
        await pilot.press("escape")
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        rows = await app.engine.rows(session)
        assert [r.kind for r in rows] == ["user", "agent", "notice"]
        assert rows[2].text == "The turn was cancelled."
        await pilot.pause()
        assert shown(app) == [(r.kind, r.text) for r in rows]


async def test_restarting_the_app_restores_sessions_and_transcripts(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        await send(app, pilot, "hello")
        session = app.current or ""
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and len(shown(app)) == 2
        )
        before = shown(app)
    again = make_app(tmp_path)
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(lambda: again.current is not None)
        assert again.current == session
        assert shown(again) == before
        assert again.engine.status(session) == Status.CLOSED  # no agent until a prompt


async def test_scroll_up_to_the_first_message_and_back_down(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ids: list[str] = []

    async def build(engine: object) -> None:
        session = await add_session(engine, project, "long", [])  # type: ignore[arg-type]
        await add_rows(engine, session, 1000)  # type: ignore[arg-type]
        ids.append(session)

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        view = transcript(app)
        await wait_until(lambda: len(view.model) > 0)
        assert view.mounted_seqs()[-1] == 1000
        most = 0
        for _ in range(200):
            view.scroll_home(animate=False, immediate=True)
            await pilot.pause()
            await view.load_earlier()
            most = max(most, len(app.query(BubbleWidget)))
            if view.mounted_seqs()[0] == 1 and not view.more_before:
                break
        assert view.mounted_seqs()[0] == 1
        assert next(iter(view.model)).text.startswith("row 00000")
        assert most <= BUBBLE_LIMIT + 120
        assert len(app.query(BubbleWidget)) <= BUBBLE_LIMIT
        assert view.detached
        for _ in range(200):
            view.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            await view.load_later()
            if not view.detached:
                break
        assert view.mounted_seqs()[-1] == 1000
        assert len(app.query(BubbleWidget)) <= BUBBLE_LIMIT


async def test_a_thought_expands_and_folds(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        await send(app, pilot, "think")
        await wait_until(
            lambda: (
                len(app.query(ThoughtBubble)) == 1
                and app.engine.status(app.current or "") == Status.READY
            )
        )
        thought = app.query_one(ThoughtBubble)
        await wait_until(lambda: thought.size.height, what="the thought laid out")
        assert thought.size.height == 1
        thought.focus()
        await pilot.press("enter")
        await wait_until(lambda: thought.size.height > 1, what="the thought expanded")
        assert thought.expanded
        await pilot.press("enter")
        await wait_until(lambda: thought.size.height == 1, what="the thought folded again")


async def test_the_rail_lists_sessions_and_a_narrow_terminal_compacts_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: object) -> None:
        for n in range(3):
            await add_session(engine, project, f"session {n}", [("p", "r")])  # type: ignore[arg-type]

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(lambda: app.current is not None)
        rail = app.query_one(SessionRail)
        assert rail.option_count == 3
        assert rail.compact
        await pilot.press("ctrl+b")
        assert not rail.display
        await pilot.press("ctrl+b")
        assert rail.display


async def test_the_benchmark_reply_on_screen_equals_what_the_agent_sent(tmp_path: Path) -> None:
    """12,476 chunks of 4 characters, as fast as the demo agent sends them: the bubble on
    screen holds exactly the agent's text, and so does the store."""
    from cockpit.ui.bubbles import AgentBubble
    from store.workload import BENCH_MARKER, benchmark_reply

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        await send(app, pilot, "bench")
        text = benchmark_reply()
        await wait_until(lambda: any(w.text == text for w in app.query(AgentBubble)), timeout=60)
        await wait_until(lambda: app.engine.status(session) == Status.READY)
        await pilot.pause()
        assert [w.text for w in app.query(AgentBubble)] == [text]
        assert [r.text for r in await app.engine.rows(session) if r.kind == "agent"] == [text]
        bubble = app.query_one(AgentBubble)
        lines = bubble._lines(bubble.content_size.width)
        assert BENCH_MARKER in lines[-1].text
        assert sum(1 for line in lines if "───" in line.text) >= 3  # three tables, rendered whole


async def test_create_a_session_from_the_dialog_and_delete_one_with_confirmation(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()

    async def build(engine: object) -> None:
        await add_session(engine, project, "keep me", [("p", "r")])  # type: ignore[arg-type]

    await fill(tmp_path / "home", build)
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        first = app.current
        await pilot.press("ctrl+n")
        await pilot.pause()
        await pilot.press("enter")  # the demo agent is highlighted, the folder filled in
        await wait_until(lambda: len(app.records) == 2 and app.current != first)
        created = app.current or ""
        await wait_until(lambda: app.engine.status(created) == Status.READY)
        assert app.records[created].cwd == str(project)
        await pilot.press("f8")
        await pilot.pause()
        await pilot.press("n")  # keep it
        await pilot.pause()
        assert created in app.records
        await pilot.press("f8")
        await pilot.pause()
        await pilot.press("y")
        await wait_until(lambda: created not in app.records and app.current == first)
        assert await app.engine.rows(created) == []


async def test_the_chosen_theme_persists(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        app.theme = "cockpit-light"
        await pilot.pause()
    again = make_app(tmp_path)
    async with again.run_test(size=SIZE):
        assert again.theme == "cockpit-light"


async def test_a_broken_user_theme_is_reported_and_the_app_starts(tmp_path: Path) -> None:
    themes = tmp_path / "home" / "config" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.toml").write_text('name = "mine"\nprimary = "not a colour"\n')
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current is not None)
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("mine.toml" in message for message in messages)
        assert app.theme == "cockpit-dark"


async def test_escape_sequences_never_reach_the_screen_and_copy_uses_the_clipboard(
    tmp_path: Path,
) -> None:
    from cockpit.ui.bubbles import AgentBubble

    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            lambda: app.current is not None and app.engine.status(app.current) == Status.READY
        )
        session = app.current or ""
        await send(app, pilot, "escape")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and len(app.query(AgentBubble)) == 1
        )
        await pilot.pause()
        bubble = app.query_one(AgentBubble)
        assert "\x1b" in bubble.text  # the transcript keeps what the agent said
        rendered = "".join(line.text for line in bubble._lines(bubble.content_size.width))
        assert "\x1b" not in rendered and "\x07" not in rendered and "red" in rendered
        assert "pwned" not in app.export_screenshot()  # the OSC title sequence is gone whole
        await pilot.press("f3")
        assert app.clipboard == bubble.text


async def test_deleting_a_session_another_cockpit_writes_is_refused_with_a_message(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    held: list[str] = []

    async def build(engine: object) -> None:
        held.append(await add_session(engine, project, "held", [("p", "r")]))  # type: ignore[arg-type]

    await fill(tmp_path / "home", build)
    other = await Store.open(tmp_path / "home" / "cockpit.db")
    try:
        await other.begin_turn(held[0], "the other Cockpit's prompt")  # claims the session
        app = make_app(tmp_path, project)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(lambda: app.current == held[0])
            await pilot.press("f8")
            await pilot.pause()
            await pilot.press("y")
            await wait_until(lambda: bool(app._notifications))
            (notice,) = list(app._notifications)
            assert "open in another Cockpit" in notice.message
            assert notice.severity == "error"
            assert held[0] in app.records and app.current == held[0]
            assert [r.text for r in await app.engine.rows(held[0])][:2] == ["p", "r"]
    finally:
        await other.close()


async def test_a_background_session_read_never_holds_the_keys_back(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ids: list[str] = []

    async def build(engine: object) -> None:
        for title in ("background", "on screen"):
            ids.append(await add_session(engine, project, title, [("p", "r")]))  # type: ignore[arg-type]

    await fill(tmp_path / "home", build)
    background, shown_id = ids
    app = make_app(tmp_path, project)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(lambda: app.current == shown_id)
        gate = asyncio.Event()
        read = app.engine.session

        async def held(session: str) -> object:
            if session == background:
                await gate.wait()  # the store is slow for this session
            return await read(session)

        app.engine.session = held  # type: ignore[method-assign,assignment]
        await app.engine.rename(background, "renamed in the background")
        try:
            await pilot.pause()
            app.post_message(events.Key("x", "x"))
            await wait_until(lambda: app.query_one(Composer).text == "x", timeout=5)
            assert app.records[background].title == "background"  # the read still waits
        finally:
            gate.set()
        await wait_until(lambda: app.records[background].title == "renamed in the background")
        rail = app.query_one(SessionRail)
        await wait_until(
            lambda: any(e.title == "renamed in the background" for e in rail._entries.values())
        )
