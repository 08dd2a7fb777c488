"""The engine end to end, through real demo-agent subprocesses, the real SDK and a real store.

Every test that streams also runs the live-stream check: the transcript rebuilt from the
frames the engine emitted equals the rows the store persisted.
"""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from cockpit.api import AgentSpec, EngineEvent, FramesEvent, PermissionRequest, StartError, Status
from cockpit.engine.session import LiveSession
from store.workload import markdown_reply
from tests.support.engine_helpers import (
    allow_all,
    assert_live_equals_stored,
    demo,
    open_engine,
    rows_of,
)


def kinds(rows: list) -> list[str]:  # type: ignore[type-arg]
    return [row.kind for row in rows]


async def test_the_tour_streams_into_one_row(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "hello there") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert kinds(rows) == ["user", "agent"]
        assert "cockpit agents" in rows[1].text
        assert recorder.frames > 100  # it streamed, in small chunks
        assert_live_equals_stored(recorder, record.id, rows)
        stored = await engine.session(record.id)
        assert stored.title == "hello there"
        assert stored.commands  # sent by the agent outside any turn, still stored
        assert stored.modes is not None and stored.modes["currentModeId"] == "ask"
        assert [s for _, s, _ in recorder.statuses][:3] == [
            Status.STARTING,
            Status.READY,
            Status.WORKING,
        ]


SCENARIOS = [
    "think",
    "table",
    "plan",
    "ids",
    "resend",
    "commands",
    "modes",
    "escape",
    "unknown",
    "stderr",
]


@pytest.mark.parametrize("word", SCENARIOS)
async def test_each_scenario_folds_and_streams_exactly(
    data_home: Path, readme_project: Path, word: str
) -> None:
    async with open_engine(data_home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, f"please {word}") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        session = await engine.session(record.id)
        agent_texts = [r.text for r in rows if r.kind == "agent"]
        if word == "think":
            assert kinds(rows) == ["user", "thought", "agent"]
        elif word == "table":
            assert kinds(rows) == ["user", "agent"]
            assert "|" in rows[1].text and len(rows[1].text) > 4000
        elif word == "plan":
            (plan,) = [r for r in rows if r.kind == "plan"]
            assert plan.payload is not None
            assert [e["status"] for e in plan.payload["entries"]] == ["completed"] * 3
        elif word == "ids":
            assert kinds(rows) == ["user", "thought", "agent"]
            assert all("@" not in r.key for r in rows[1:])
        elif word == "resend":
            assert len(agent_texts) == 2
            assert agent_texts[0].endswith(" And one more sentence.")
            assert agent_texts[1] == "Done re-sending."
            assert kinds(rows).count("tool") == 1
        elif word == "commands":
            assert session.commands is not None
            assert "deploy" in {c["name"] for c in session.commands}
        elif word == "modes":
            assert session.modes is not None and session.modes["currentModeId"] == "plan"
        elif word == "escape":
            assert "\x1b[31m" in agent_texts[0]
        elif word == "unknown":
            notices = [r.text for r in rows if r.kind == "notice"]
            assert any("'brand_new_kind'" in text for text in notices)
            (tool,) = [r for r in rows if r.kind == "tool"]
            assert tool.payload is not None and tool.payload["status"] == "completed"
        elif word == "stderr":
            assert (data_home / "logs" / f"{record.id}.log").stat().st_size >= 1024 * 1024
            assert oct((data_home / "logs" / f"{record.id}.log").stat().st_mode & 0o777) == "0o600"


async def test_tools_read_edit_and_run_a_terminal(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        tools = [r.payload for r in rows if r.kind == "tool" and r.payload]
        assert [t["kind"] for t in tools] == ["read", "edit", "execute"]
        assert all(t["status"] == "completed" for t in tools)
        assert "It has a readme." in str(tools[0]["content"])
        assert (readme_project / "demo-notes.md").exists()
        (terminal,) = tools[2]["terminalOutput"].values()
        assert terminal["output"] == "hello from the terminal\n"
        assert terminal["exitStatus"] == {"exitCode": 0, "signal": None}
        decisions = [r for r in rows if r.kind == "permission"]
        assert [d.payload["decidedBy"] for d in decisions if d.payload] == ["policy", "policy"]
        assert decisions[0].text.startswith("Allowed once: ")


async def test_a_user_answer_is_written_before_the_agent_goes_on(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)

        def answer(request: PermissionRequest) -> None:
            asyncio.get_running_loop().create_task(engine.answer_permission(request.id, "allow"))

        recorder.on_ask = answer
        assert await engine.prompt(record.id, "permission") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert_live_equals_stored(recorder, record.id, rows)
        decision = next(r for r in rows if r.kind == "permission")
        assert decision.text.startswith("Allowed once: ")
        assert decision.payload is not None and decision.payload["decidedBy"] == "user"
        after = [r for r in rows if r.seq > decision.seq and r.kind == "agent"]
        assert after, "the agent's reply comes after the decision row"
        assert engine.pending_permissions() == []
        assert any(status == Status.WAITING for _, status, _ in recorder.statuses)


async def test_allow_always_is_not_asked_again(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)

        def answer(request: PermissionRequest) -> None:
            asyncio.get_running_loop().create_task(
                engine.answer_permission(request.id, "allow-always")
            )

        recorder.on_ask = answer
        await engine.prompt(record.id, "permission")
        await engine.prompt(record.id, "permission")
        assert len(recorder.asked) == 1
        decisions = [r.payload for r in await rows_of(engine, record.id) if r.kind == "permission"]
        assert [d["decidedBy"] for d in decisions if d] == ["user", "remembered"]


async def test_cancel_while_a_permission_is_pending(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        turn = asyncio.create_task(engine.prompt(record.id, "permission"))
        await recorder.wait_for(lambda: bool(recorder.asked))
        assert await engine.cancel(record.id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        rows = await rows_of(engine, record.id)
        decision = next(r for r in rows if r.kind == "permission")
        assert decision.text.startswith("Cancelled: ")
        assert engine.pending_permissions() == []
        (tool,) = [r for r in rows if r.kind == "tool"]
        assert tool.payload is not None and tool.payload["status"] == "cancelled"
        assert_live_equals_stored(recorder, record.id, rows)


async def test_cancel_mid_stream_keeps_what_arrived(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        turn = asyncio.create_task(engine.prompt(record.id, "slow"))
        await recorder.wait_for(lambda: recorder.frames > 12)
        started = asyncio.get_running_loop().time()
        assert await engine.cancel(record.id)
        assert await asyncio.wait_for(turn, 5) == "cancelled"
        assert asyncio.get_running_loop().time() - started < 2
        rows = await rows_of(engine, record.id)
        assert kinds(rows) == ["user", "agent", "notice"]  # "The turn was cancelled."
        assert len(rows[1].text) > 20
        assert_live_equals_stored(recorder, record.id, rows)
        assert engine.status(record.id) == Status.READY
        assert await engine.prompt(record.id, "hello") == "end_turn"  # the session goes on


async def test_an_agent_that_crashes_mid_turn(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "crash") == "error"
        rows = await rows_of(engine, record.id)
        assert kinds(rows) == ["user", "agent", "error"]
        assert len(rows[1].text) > 10  # what streamed before the crash is kept
        assert "code 3" in rows[2].text and "crashing on purpose" in rows[2].text
        assert engine.status(record.id) == Status.EXITED
        assert (await engine.session(record.id)).status == Status.EXITED
        assert_live_equals_stored(recorder, record.id, rows)
        # Prompting restarts the agent, which reloads its session; nothing is lost.
        assert await engine.prompt(record.id, "hello again") == "end_turn"
        after = await rows_of(engine, record.id)
        assert [r.text for r in after[:3]] == [r.text for r in rows]
        assert any("Reconnected" in r.text for r in after if r.kind == "notice")


async def test_garbage_on_stdout_does_not_kill_the_session(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "garbage") == "end_turn"
        rows = await rows_of(engine, record.id)
        notices = [r.text for r in rows if r.kind == "notice"]
        assert "Ignored a line that is not JSON: this is not json from the agent." in notices
        assert "Ignored a JSON line that is not an object: 42 from the agent." in notices
        assert "Ignored a JSON line that is not an object: null from the agent." in notices
        assert "Still here after the garbage." in [r.text for r in rows if r.kind == "agent"]
        assert await engine.prompt(record.id, "hello") == "end_turn"


async def test_a_ten_megabyte_line(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "huge") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert [len(r.text) for r in rows if r.kind == "agent"] == [10 * 1024 * 1024]
        assert_live_equals_stored(recorder, record.id, rows)


async def test_an_agent_that_never_answers_initialize(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home, timeout=1) as (engine, _recorder):
        record = await engine.create_session(demo("--hang-initialize"), readme_project)
        with pytest.raises(StartError, match="did not answer within 1 s"):
            await engine.start(record.id)
        rows = await rows_of(engine, record.id)
        assert kinds(rows) == ["error"]
        assert engine.status(record.id) == Status.ERROR
        live = engine._live[record.id]
        assert live.process is not None and live.process.returncode is not None


async def test_an_agent_that_exits_at_start(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session(demo("--exit-on-start", "5"), readme_project)
        assert await engine.prompt(record.id, "hello") == "error"
        rows = await rows_of(engine, record.id)
        assert rows[0].kind == "user"
        assert "exiting at start" in rows[-1].text
        assert engine.status(record.id) == Status.ERROR


async def test_a_missing_agent_program_says_how_to_install_it(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("goose", readme_project)
        with pytest.raises(StartError, match="was not found"):
            await engine.start(record.id)
        (row,) = await rows_of(engine, record.id)
        assert "goose" in row.text and "install" in row.text


async def test_restart_with_a_stored_transcript_drops_the_replay(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        await engine.prompt(record.id, "first question")
        await engine.prompt(record.id, "think")
        before = await rows_of(engine, record.id)
        await engine.stop(record.id)
        assert engine.status(record.id) == Status.CLOSED
    async with open_engine(data_home) as (engine, _recorder):
        # A new engine: a transcript reopens from the store without any agent.
        page = await engine.page(record.id)
        assert [r.text for r in page.rows] == [r.text for r in before]
        await engine.start(record.id)
        after = await rows_of(engine, record.id)
        assert [r.text for r in after[: len(before)]] == [r.text for r in before]
        assert kinds(after[len(before) :]) == ["notice"]
        assert "Reconnected" in after[-1].text


async def test_load_without_a_stored_transcript_keeps_the_replay(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        original = await engine.create_session("demo", readme_project)
        await engine.prompt(original.id, "one")
        await engine.prompt(original.id, "two")
        agent_session = (await engine.session(original.id)).agent_session_id
        await engine.stop(original.id)
        imported = await engine.create_session("demo", readme_project)
        await engine.store.update_session(imported.id, agent_session_id=agent_session)
        await engine.start(imported.id)
        rows = await rows_of(engine, imported.id)
        assert [(r.turn, r.kind) for r in rows[:4]] == [
            (1, "user"),
            (1, "agent"),
            (2, "user"),
            (2, "agent"),
        ]
        assert [r.text for r in rows[:4:2]] == ["one", "two"]
        assert "replayed 2 turn(s)" in rows[-1].text


async def test_a_load_that_fails_falls_back_honestly(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        await engine.store.update_session(
            record.id, agent_session_id="not-a-session-the-agent-knows"
        )
        await engine.start(record.id)
        (row,) = await rows_of(engine, record.id)
        assert row.kind == "notice" and "could not load its session" in row.text
        assert "does not remember" in row.text
        assert (await engine.session(record.id)).agent_session_id != "not-a-session-the-agent-knows"


async def test_fs_escapes_are_refused(
    data_home: Path, readme_project: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        assert await engine.prompt(record.id, "outside") == "end_turn"
        rows = await rows_of(engine, record.id)
        refused = [r.text for r in rows if r.kind == "notice" and r.text.startswith("Refused")]
        assert len(refused) == 4
        assert any("/etc/hostname" in text for text in refused)
        assert any("escape-link" in text for text in refused)
        assert not Path("/tmp/cockpit-demo-outside.txt").exists()
        assert "secret" not in "".join(r.text for r in rows)
        tools = [r.payload for r in rows if r.kind == "tool" and r.payload]
        assert tools and all(t["status"] == "failed" for t in tools)


@pytest.mark.real_spawn  # the group is the agent's own, not a stand-in's (tests/support/agent_forks.py)
async def test_stop_ends_the_process_group_and_leaves_no_zombie(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        await engine.start(record.id)
        live = engine._live[record.id]
        assert live.process is not None
        pid = live.process.process.pid
        await engine.stop(record.id)
        assert live.process.returncode is not None
        assert not Path(f"/proc/{pid}").exists()
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


async def test_a_start_asked_for_while_a_stop_runs_waits_for_it(
    data_home: Path, readme_project: Path
) -> None:
    """A prompt typed the moment its session closes: the start waits for the stop, then
    runs a new agent. Run side by side, the stop marked the new agent's session closed and
    waited forever for that agent, which no one stopped, to exit (the app never closed)."""
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        await engine.start(record.id)
        live = engine._live[record.id]
        assert live.process is not None
        first = live.process.process.pid
        stopping = asyncio.ensure_future(engine.stop(record.id))
        await asyncio.sleep(0)  # the stop is under way
        await asyncio.wait_for(engine.start(record.id), 30)
        await asyncio.wait_for(stopping, 30)
        assert engine.status(record.id) == Status.READY
        second = live.process.process.pid
        assert second != first and not Path(f"/proc/{first}").exists()
        await asyncio.wait_for(engine.stop(record.id), 30)
        assert not Path(f"/proc/{second}").exists()


async def test_modes_and_config_options(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        await engine.set_mode(record.id, "accept")
        await engine.set_config_option(record.id, "model", "demo-smart")
        session = await engine.session(record.id)
        assert session.modes is not None and session.modes["currentModeId"] == "accept"
        assert session.config_options is not None
        (model,) = [o for o in session.config_options if o["id"] == "model"]
        assert model["currentValue"] == "demo-smart"


async def test_eight_sessions_streaming_at_once(data_home: Path, readme_project: Path) -> None:
    async with open_engine(data_home) as (engine, recorder):
        records = [await engine.create_session("demo", readme_project) for _ in range(8)]
        reasons = await asyncio.gather(*(engine.prompt(r.id, "table") for r in records))
        assert reasons == ["end_turn"] * 8
        known = "# A long markdown reply\n\n" + markdown_reply(random.Random(7), 6000)
        for record in records:
            rows = await rows_of(engine, record.id)
            assert kinds(rows) == ["user", "agent"]
            assert rows[1].text == known  # no character lost or doubled, in any session
            assert_live_equals_stored(recorder, record.id, rows)


async def test_an_agent_speaking_another_protocol_version_is_refused(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session(demo("--protocol-version", "2"), readme_project)
        with pytest.raises(StartError, match="speaks ACP version 2; Cockpit speaks version 1"):
            await engine.start(record.id)
        assert engine.status(record.id) == Status.ERROR
        live = engine._live[record.id]
        assert live.process is not None and live.process.returncode is not None


async def test_a_missing_file_is_not_found_unless_the_agent_needs_empty_content(
    data_home: Path, readme_project: Path
) -> None:
    async with open_engine(data_home) as (engine, _recorder):
        record = await engine.create_session("demo", readme_project)
        live = LiveSession(
            record,
            AgentSpec(name="demo", command=("x",)),
            engine.store,
            lambda event: None,
            data_dir=data_home,
            handshake_timeout=1,
        )
        with pytest.raises(RequestError) as raised:
            await live.read_file(str(readme_project / "missing.md"), None, None)
        assert raised.value.code == -32002
        live.spec = AgentSpec(name="gemini", command=("gemini",), missing_file="empty")
        assert await live.read_file(str(readme_project / "missing.md"), None, None) == ""
        with pytest.raises(RequestError):
            await live.read_file("/etc/hostname", None, None)
        await live.stop()


async def test_a_running_command_shows_its_output_before_it_ends(
    data_home: Path, readme_project: Path
) -> None:
    """The card of a command that takes a while gets its output while it still runs."""
    async with open_engine(data_home, auto_answer=allow_all) as (engine, recorder):
        record = await engine.create_session("demo", readme_project)
        seen: list[dict[str, Any]] = []

        def watch(event: EngineEvent) -> None:
            if isinstance(event, FramesEvent):
                for frame in event.frames:
                    for output in ((frame.payload or {}).get("terminalOutput") or {}).values():
                        seen.append(output)

        engine.subscribe(watch)
        assert await engine.prompt(record.id, "build") == "end_turn"
        # The card's first frame may come before any output: the first with some counts.
        shown = [o["output"] for o in seen if o["exitStatus"] is None and o["output"]]
        assert shown and "build step 1 of 5" in shown[0]
        assert "built" not in shown[0]
        assert seen[-1]["exitStatus"] == {"exitCode": 0, "signal": None}
        assert seen[-1]["output"].endswith("build step 5 of 5\nbuilt\n")
        assert_live_equals_stored(recorder, record.id, await rows_of(engine, record.id))
