"""The TUI as a user uses it, against the engine in its process ("local") and against a
real Cockpit service in another process ("service": a `RemoteEngine` over its socket):
streaming, questions, keys in bursts, switching and resizing mid-stream; then what only
the service does: Ctrl+Q detaches while turns go on, two screens on one service, drafts
kept, and a service killed under the screen and started again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import tests.ui.test_tui_interaction as interaction
from cockpit.api import EngineAPI, Status, StatusEvent
from cockpit.engine.recovery import CUT_BY_A_STOP
from cockpit.engine.registry import agent_from_command
from cockpit.protocol import STATUS
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import connect_or_start, open_socket, query_service
from cockpit.ui.app import CockpitApp
from cockpit.ui.composer import Composer
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screens.inbox import InboxScreen
from cockpit.ui.status_line import StatusLine
from cockpit.ui.transcript import TranscriptView
from tests.service.test_service_environment import dumping_agent, environment_in
from tests.support.service_helpers import cockpit, service_pid
from tests.support.ui_helpers import burst, ready, send, steady, wait_until
from tests.support.ui_service_helpers import Engines, engines_of, screen_equals_rows

SIZE = (100, 30)

STREAM_END = 60.0
"""Seconds a `slow` reply (about 17 s on an idle machine) may take to end."""


@pytest.fixture
async def service(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Engines]:
    """Apps attached to a service on the test's home (what only the service does)."""
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    async with engines_of("service", isolated_home, tmp_path / "project") as made:
        yield made


async def second_session(app: CockpitApp, title: str) -> str:
    """Another session in the app's folder, on the rail."""
    record = await app.engine.create_session("demo", app.folder, title=title)
    await app.sessions.reload()
    app.overview.refresh_rail()
    return record.id


def shown(app: CockpitApp) -> str | None:
    return app.query_one(TranscriptView).session


def received(app: CockpitApp, session: str) -> int:
    """Characters of agent text the screen holds for `session` (0 when not shown)."""
    if shown(app) != session:
        return 0
    return sum(len(b.text) for b in app.query_one(TranscriptView).model if b.kind == "agent")


def turn_ends(app: CockpitApp, session: str) -> list[str]:
    """The stop reasons of `session`'s turns that end from now on, as the app's engine
    tells them (a list that fills). Not the status: a client's READY can still be the one
    of the turn before when the next turn's rows come."""
    ends: list[str] = []

    def listen(event: object) -> None:
        if isinstance(event, StatusEvent) and event.session == session and event.turn_ended:
            ends.append(event.detail)

    app.engine.subscribe(listen)
    return ends


# -- both engines ---------------------------------------------------------------------------


async def test_a_user_streams_types_switches_and_resizes_and_the_screen_equals_the_rows(
    engines: Engines,
) -> None:
    """While `slow` streams: keys in bursts (typing, moving, Ctrl+End), a switch to another
    session and back, two resizes; at its end, and after `bench` (50 KB in 4-character
    chunks), the transcript on screen is the stored rows, bubble for bubble."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        other = await second_session(app, "elsewhere")
        await send(app, pilot, "slow")
        await wait_until(lambda: received(app, session) > 100, 20, "the reply to start")
        composer = app.query_one(Composer)
        # Typing, moving and the switch to the other session in one burst (no pause, as a
        # terminal delivers what is typed fast), sent while this one streams.
        typed = [*"half a thought", "backspace", "ctrl+end", "left", "right"]
        burst(app, *typed, *"xyz", "backspace", "backspace", "backspace", "ctrl+down")
        seen = app.engine.status(session)
        await wait_until(lambda: shown(app) == other, what="the other session on screen")
        assert composer.text == ""
        await pilot.press("ctrl+up")
        await wait_until(lambda: shown(app) == session, what="back on the streaming session")
        assert composer.text == "half a though"
        assert seen == Status.WORKING, "the reply ended before the switch: nothing was tested"
        await pilot.resize_terminal(80, 24)
        await pilot.resize_terminal(120, 40)
        await wait_until(lambda: app.engine.status(session) == Status.READY, STREAM_END)
        await screen_equals_rows(app, session)
        composer.clear()
        ends = turn_ends(app, session)
        await send(app, pilot, "bench")
        await wait_until(lambda: ends, STREAM_END, "the end of the bench turn")
        await screen_equals_rows(app, session)
        reply = (await app.engine.rows(session))[-1]
        assert reply.kind == "agent" and len(reply.text) > 40_000
        assert app.is_running


async def test_a_question_is_shown_inline_and_answered_with_a_key(engines: Engines) -> None:
    """The agent's question shows in the transcript with the keyboard on it; a digit
    answers it, the turn goes on to its end, and the keyboard is back in the composer."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        await send(app, pilot, "permission")
        await wait_until(lambda: len(app.query(PermissionPrompt)) == 1, what="the question")
        await pilot.pause()
        assert isinstance(app.focused, PermissionPrompt)
        await pilot.press("1")
        await wait_until(
            lambda: app.engine.status(session) == Status.READY and not app.query(PermissionPrompt)
        )
        await screen_equals_rows(app, session)
        rows = await app.engine.rows(session)
        assert [r.text for r in rows if r.kind == "permission"] == [
            "Allowed once: Write demo-notes.md"
        ]
        assert isinstance(app.focused, Composer)


async def test_drafts_stay_with_their_session(engines: Engines) -> None:
    """A draft typed in one session is there again after a visit to another, and in the
    next app on the same store."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        second = await second_session(app, "second")
        await pilot.press(*"first draft")
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == second)
        composer = app.query_one(Composer)
        assert composer.text == ""
        await pilot.press(*"second draft")
        await pilot.press("ctrl+up")
        await wait_until(lambda: app.current == first)
        assert composer.text == "first draft"
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == second)
        assert composer.text == "second draft"
    again = engines.app()
    async with again.run_test(size=SIZE):
        await wait_until(lambda: again.current == second, what="the last session reopened")
        assert again.query_one(Composer).text == "second draft"
        assert again.drafts.get(first) == "first draft"


async def test_keys_typed_right_after_a_switch_go_to_the_session_switched_to(
    engines: Engines,
) -> None:
    """Typing, Ctrl+Down, typing, Ctrl+Up, typing, all in one burst (a fast typist's keys):
    each letter lands in the draft of the session on screen when it was typed, none in the
    session just left."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        second = await second_session(app, "second")
        composer = app.query_one(Composer)
        burst(app, *"one", "ctrl+down", *"two", "ctrl+up", *"more", "ctrl+down", *"!")
        await wait_until(lambda: app.current == second and composer.text.endswith("!"))
        await steady(pilot, lambda: composer.text)
        assert composer.text == "two!"
        assert app.drafts.get(first) == "onemore"


async def test_esc_right_before_a_switch_cancels_the_turn_of_the_session_left(
    engines: Engines,
) -> None:
    """Esc and Ctrl+Down in one burst while a reply streams: the turn cancelled is the one
    on screen when Esc was typed."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        other = await second_session(app, "other")
        ends = turn_ends(app, session)
        await send(app, pilot, "slow")
        await wait_until(lambda: received(app, session) > 100, 20, "the reply to start")
        burst(app, "escape", "ctrl+down")
        await wait_until(lambda: ends, 20, "the end of the turn")
        assert ends == ["cancelled"]
        assert app.current == other


async def test_a_prompt_sent_right_before_a_switch_goes_to_the_session_it_was_typed_in(
    engines: Engines,
) -> None:
    """A prompt, Enter and Ctrl+Up in one burst: the prompt is the session's it was typed
    in, and the session switched to gets nothing."""
    app = engines.app()
    async with app.run_test(size=SIZE) as pilot:
        first = await ready(app)
        second = await second_session(app, "second")
        await pilot.press("ctrl+down")
        await wait_until(lambda: app.current == second)
        ends = turn_ends(app, second)
        burst(app, *"hello there", "enter", "ctrl+up")
        await wait_until(lambda: ends, STREAM_END, "the end of the turn typed in the second")
        sent = [row.text for row in await app.engine.rows(second) if row.kind == "user"]
        assert sent == ["hello there"]
        assert not [row for row in await app.engine.rows(first) if row.kind == "user"]
        assert app.current == first
        assert app.query_one(Composer).text == ""


# -- the service only -----------------------------------------------------------------------


async def service_status(engines: Engines) -> dict[str, Any]:
    """What `cockpit service status` says (a question that does not attach a client)."""
    answer: dict[str, Any] | None = await query_service(engines.home, STATUS)
    assert answer is not None, "the service does not answer"
    return answer


async def test_ctrl_q_detaches_and_the_turns_go_on_for_the_next_app(service: Engines) -> None:
    """Ctrl+Q while a reply streams: the app exits without asking, and the service streams
    on. A question asked while no screen is attached (another session's turn, which a
    script started) waits for the next app: it shows the reply complete, and the question
    in the inbox and inline; answering it there ends that turn."""
    app = service.app()
    async with app.run_test(size=SIZE) as pilot:
        streaming = await ready(app)
        asking = await second_session(app, "asking")
        await send(app, pilot, "slow")
        await wait_until(lambda: received(app, streaming) > 50, 20, "the reply to start")
        await pilot.press("ctrl+q")
        await wait_until(lambda: not app.is_running, what="the app to exit")
    script = await RemoteEngine.attach(lambda: open_socket(service.home), name="a script")
    script.send(asking, "permission")
    await script.close()  # after the prompt is sent

    async def asked_with_nobody_attached() -> bool:
        state = await service_status(service)
        return bool(state["clients"] == 0 and state["questions"] == 1)

    await wait_until(asked_with_nobody_attached, 30, "the question, asked with nobody attached")
    state = await service_status(service)
    assert {s["id"]: s["status"] for s in state["sessions"]}[streaming] == Status.WORKING

    again = service.app()
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(lambda: shown(again) == streaming, what="the streaming session reopened")
        assert again.engine.pending_count(asking) == 1
        await wait_until(lambda: again.engine.status(streaming) == Status.READY, STREAM_END)
        await screen_equals_rows(again, streaming)
        rows = await again.engine.rows(streaming)
        assert rows[-1].kind == "agent" and rows[-1].text.startswith("# A slow reply")
        assert [r.kind for r in rows].count("agent") == 1
        await pilot.press("ctrl+o")
        await wait_until(lambda: isinstance(again.screen, InboxScreen), what="the inbox")
        inbox = again.screen
        assert isinstance(inbox, InboxScreen)
        assert [item.session for item in inbox.items if item.request is not None] == [asking]
        await pilot.press("escape", "ctrl+g")  # to the session that needs the user
        await wait_until(lambda: len(again.query(PermissionPrompt)) == 1, what="the question")
        await pilot.pause()
        await pilot.press("1")
        await wait_until(lambda: again.engine.status(asking) == Status.READY)
        await screen_equals_rows(again, asking)
        decisions = [r.text for r in await again.engine.rows(asking) if r.kind == "permission"]
        assert decisions == ["Allowed once: Write demo-notes.md"]


async def test_two_apps_on_one_service_show_the_same_live_state(service: Engines) -> None:
    """Two screens on one service: a reply one of them asks for streams on both, the same
    row for row; a question shows on both, and once answered in the second it leaves the
    first."""
    first, second = service.app(), service.app()
    async with first.run_test(size=SIZE) as one, second.run_test(size=(80, 24)) as two:
        session = await ready(first)
        await wait_until(lambda: shown(second) == session, what="the same session in both")
        ends = turn_ends(second, session)
        await send(first, one, "bench")
        await wait_until(lambda: received(second, session) > 1000, what="frames in the second")
        await wait_until(lambda: ends, STREAM_END, "the end of the turn, told to the second")
        await screen_equals_rows(first, session)
        await screen_equals_rows(second, session)
        await send(first, one, "permission")
        await wait_until(lambda: len(first.query(PermissionPrompt)) == 1, what="asked in one")
        await wait_until(lambda: len(second.query(PermissionPrompt)) == 1, what="and in two")
        await two.pause()
        assert isinstance(second.focused, PermissionPrompt)
        await two.press("2")  # Always allow
        await wait_until(lambda: not first.query(PermissionPrompt), what="the question gone")
        await wait_until(lambda: first.engine.status(session) == Status.READY)
        assert first.engine.pending_count() == 0
        for app in (first, second):
            await screen_equals_rows(app, session)


KEYS_WHILE_AWAY = 10.0
"""Seconds the keys pressed while the service is away may take to be handled (a request
that waited for the service to come back held them 30 s; now 2 s at most)."""


async def test_a_killed_service_leaves_the_screen_up_and_the_next_one_is_reattached(
    service: Engines,
) -> None:
    """SIGKILL of the service mid-reply: the app stays up, says the service is lost and
    takes keys (a switch, a cancel: they fail, and say so); once a new service runs, the
    app attaches to it by itself and shows the rows, the turn that was cut ending with
    the notice the new service wrote; a prompt then runs as before."""
    app = service.app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        session = await ready(app)
        other = await second_session(app, "other")
        await send(app, pilot, "slow")
        await wait_until(lambda: received(app, session) > 100, 20, "the reply to start")
        await service.service.kill()

        def told(words: str) -> bool:
            return any(words in n.message for n in app._notifications)

        await wait_until(lambda: told("Lost the Cockpit service"), what="word of the loss")
        status = app.query_one("#status", StatusLine)
        assert status.parts[0][1] == "OFFLINE", status.parts  # the rest may be stale
        try:
            async with asyncio.timeout(KEYS_WHILE_AWAY):
                await pilot.press(*"typed meanwhile", "escape", "ctrl+down")
        except TimeoutError:
            raise AssertionError("keys pressed while the service was away hung") from None
        await wait_until(lambda: app.current == other, KEYS_WHILE_AWAY, "the switch made")
        assert app.is_running
        await wait_until(lambda: told("could not cancel the turn"), what="the failed cancel")
        await wait_until(lambda: told("could not show the session"), what="the failed switch")
        await service.start_service()
        await wait_until(lambda: told("Attached again"), 20, "word of the new attach")
        await wait_until(lambda: status.parts[0][1] != "OFFLINE", what="the status line back")
        await screen_equals_rows(app, other)  # not what the screen held when its read failed
        await pilot.press("ctrl+up")
        await wait_until(lambda: app.engine.status(session) == Status.CLOSED)
        await screen_equals_rows(app, session)
        model = list(app.query_one(TranscriptView).model)
        assert model[-1].kind == "notice" and model[-1].text == CUT_BY_A_STOP
        assert model[-2].kind == "agent" and model[-2].text.startswith("# A slow reply")
        composer = app.query_one(Composer)
        assert composer.text == "typed meanwhile"
        composer.clear()
        ends = turn_ends(app, session)
        await send(app, pilot, "hello")
        await wait_until(lambda: ends, 30, "the end of the turn after it")
        await screen_equals_rows(app, session)


# -- interaction scenarios of tests/ui/test_tui_interaction.py, against the service ------------

SCENARIOS = [
    interaction.test_an_inline_request_is_answered_with_a_key,
    interaction.test_answering_from_the_inbox_reaches_the_right_agent,
    interaction.test_allow_always_is_not_asked_again_and_a_policy_is_recorded,
    interaction.test_cancel_while_a_request_is_pending,
    interaction.test_a_mentioned_file_reaches_the_agent,
    interaction.test_tab_completes_the_word_as_typed_when_keys_come_faster_than_the_menu,
    interaction.test_slash_completion_lists_agent_and_cockpit_commands,
    interaction.test_shift_tab_cycles_modes_and_the_options_screen_sets_one,
    interaction.test_the_plan_from_the_rail_and_an_export,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__.removeprefix("test_"))
async def test_an_interaction_scenario_against_the_service(
    scenario: Any, service: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario as written (its assertions unchanged), its app attached to a service:
    the module's `make_app` is swapped for one that makes such apps."""

    def make_app(_tmp_path: Path, folder: Path | None = None, **_: object) -> CockpitApp:
        return service.app(folder)

    monkeypatch.setattr(interaction, "make_app", make_app)
    await scenario(tmp_path)


async def test_the_screen_starts_agents_with_its_own_environment(
    service: Engines, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service started without the variable; a screen attached from a shell that has
    it starts its new session's agent with it, and so does the next screen that reopens
    the session in a new service and prompts it, with the value its own shell has then."""
    out = tmp_path / "agent.env"
    spec = agent_from_command(dumping_agent(out))
    monkeypatch.setenv("SCREEN_ONLY", "first screen")
    app = service.app(agent=spec)
    async with app.run_test(size=SIZE):
        await ready(app)
        assert environment_in(out)["SCREEN_ONLY"] == "first screen"
    await service.service.stop()
    await service.start_service()
    monkeypatch.setenv("SCREEN_ONLY", "second screen")
    again = service.app()
    async with again.run_test(size=SIZE) as pilot:
        await wait_until(lambda: again.current is not None)
        await send(again, pilot, "hello")
        await ready(again)
        assert environment_in(out)["SCREEN_ONLY"] == "second screen"


async def test_a_service_the_user_stops_stays_stopped_until_enter_starts_it(
    service: Engines,
) -> None:
    """`cockpit service stop` under an attached screen: the screen says so and starts no
    service by itself (it used to start one 4 s later); Enter starts it again and sends
    what was typed."""
    home = service.home

    async def attached() -> EngineAPI:
        return await RemoteEngine.attach(lambda: connect_or_start(home), name="test-client")

    app = CockpitApp(attached, folder=service.project, blink=False)
    service.project.mkdir(parents=True, exist_ok=True)
    async with app.run_test(size=SIZE) as pilot:
        session = await ready(app)
        stopped = await asyncio.to_thread(cockpit, "service", "stop", "--yes", home=home)
        assert stopped.returncode == 0, stopped.stderr
        status = app.query_one(StatusLine)
        await wait_until(lambda: "press Enter to start it again" in str(status.render()))
        assert str(status.render()).startswith("OFFLINE · ")
        assert app.engine.link_problem == "stopped by `cockpit service stop`"
        remote = app.engine
        assert isinstance(remote, RemoteEngine)
        await wait_until(lambda: not remote.reattaching, 30, "the link to stop attaching again")
        assert service_pid(home) is None, "the screen started a service by itself"
        await send(app, pilot, "hello")
        await wait_until(lambda: service_pid(home) is not None, what="the service to start")
        await wait_until(lambda: app.engine.link_problem is None)
        await wait_until(
            lambda: "press Enter" not in str(status.render()), what="the status line to clear"
        )
        rows = await app.engine.rows(session)
        await wait_until(lambda: app.engine.status(session) == Status.READY, 30)
        rows = await app.engine.rows(session)
        assert [row.text for row in rows if row.kind == "user"][-1] == "hello"
