"""`agents.toml` and `policy.toml` are read when they are used: by the engine in process (as
`--local` runs it), and by a real service that was started before the edit, through
`cockpit run`; an agent named on the command line is looked up where the agents run."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cockpit.api import AgentInfo, AgentSpec, EngineEvent, PermissionRequest, ProblemEvent
from cockpit.cli.tui import unknown_agent
from cockpit.engine.core import Engine
from tests.support.engine_helpers import Recorder, rows_of
from tests.support.service_helpers import cockpit, cockpit_command, service_pid, services_stopped

BENCH = '[agents.bench]\ncommand = ["{python}", "{agents}/demo_agent.py"]\ntitle = "Bench"\n'
"""An agent of the user's own: the demo agent under another name."""

BROKEN_TOML = "\n[agents.other\n"
"""Appended to BENCH: line 5 is no TOML."""

ALLOWED = "Allowed once: Write demo-notes.md (global policy: edit = allow)"
"""The decision row of the demo's `permission` turn under `edit = "allow"`."""


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


class Problems:
    """The problem events an engine sent."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, event: EngineEvent) -> None:
        if isinstance(event, ProblemEvent):
            self.messages.append(event.message)


@pytest.fixture
def config(isolated_home: Path) -> Path:
    """Cockpit's config folder for the test (COCKPIT_HOME's)."""
    folder = isolated_home / "config"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def names(engine: Engine) -> set[str]:
    return {info.spec.name for info in engine.agents()}


# -- the engine in process ---------------------------------------------------------------------


async def test_an_agent_added_while_the_engine_runs_is_known_at_once(
    isolated_home: Path, config: Path, project_dir: Path
) -> None:
    engine = await Engine.open(isolated_home, handshake_timeout=15)
    try:
        assert "bench" not in names(engine)
        (config / "agents.toml").write_text(BENCH)
        assert "bench" in names(engine)
        record = await engine.create_session("bench", project_dir)
        assert (record.agent, engine.agent_of(record).title) == ("bench", "Bench")
        assert await engine.prompt(record.id, "hello") == "end_turn"
        (config / "agents.toml").write_text("")
        assert "bench" not in names(engine), "a removed agent is still offered"
        with pytest.raises(KeyError, match="no agent called 'bench'"):
            await engine.create_session("bench", project_dir)
    finally:
        await engine.close()


async def test_a_broken_agents_edit_is_told_once_and_the_last_good_entries_stay(
    isolated_home: Path, config: Path, project_dir: Path
) -> None:
    agents = config / "agents.toml"
    agents.write_text(BENCH)
    engine = await Engine.open(isolated_home, handshake_timeout=15)
    problems = Problems()
    engine.subscribe(problems)
    try:
        assert "bench" in names(engine)
        agents.write_text(BENCH + BROKEN_TOML)
        for _ in range(3):
            assert "bench" in names(engine)
        record = await engine.create_session("bench", project_dir)
        assert engine.agent_of(record).title == "Bench"
        (told,) = problems.messages
        assert told.startswith(f"{agents}:5: not valid TOML")
        assert told.endswith("(the agents read before stay as they were)")
        assert engine.problems == [told], "what a client attaching now is shown"
        agents.write_text(BENCH)
        assert names(engine) >= {"bench"} and engine.problems == []
        assert len(problems.messages) == 1
    finally:
        await engine.close()


async def test_a_stored_session_starts_its_entry_as_it_is_now(
    isolated_home: Path, config: Path, project_dir: Path
) -> None:
    """The entry is read when the agent starts, not kept from the first start: a session
    whose agent stopped runs the edited command at its next prompt."""
    agents = config / "agents.toml"
    agents.write_text(BENCH)
    engine = await Engine.open(isolated_home, handshake_timeout=15)
    try:
        record = await engine.create_session("bench", project_dir)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        await engine.stop(record.id)
        agents.write_text('[agents.bench]\ncommand = ["/nowhere/bench-agent"]\ntitle = "Moved"\n')
        assert engine.agent_of(record).title == "Moved"
        assert await engine.prompt(record.id, "hello again") == "error"
        error = (await rows_of(engine, record.id))[-1]
        assert error.kind == "error" and "/nowhere/bench-agent" in error.text
    finally:
        await engine.close()


async def permission_turn(engine: Engine, project: Path) -> tuple[list[str], int]:
    """The demo's `permission` turn in a new session: its decision rows, and how many
    questions reached the user (each is cancelled, so the turn ends)."""
    answers: set[asyncio.Future[None]] = set()

    def cancel(request: PermissionRequest) -> None:
        answers.add(asyncio.ensure_future(engine.answer_permission(request.id, None)))

    recorder = Recorder(on_ask=cancel)
    unsubscribe = engine.subscribe(recorder)
    try:
        record = await engine.create_session("demo", project)
        await asyncio.wait_for(engine.prompt(record.id, "permission"), 60)
    finally:
        unsubscribe()
    rows = await rows_of(engine, record.id)
    return [row.text for row in rows if row.kind == "permission"], len(recorder.asked)


async def test_a_policy_edit_decides_the_next_request_and_a_broken_one_keeps_the_rules(
    isolated_home: Path, config: Path, project_dir: Path
) -> None:
    policy = config / "policy.toml"
    engine = await Engine.open(isolated_home, handshake_timeout=15)
    problems = Problems()
    engine.subscribe(problems)
    try:
        policy.write_text('[permissions]\nedit = "allow"\n')
        assert await permission_turn(engine, project_dir) == ([ALLOWED], 0)
        policy.write_text('[permissions]\nedit = "allow"\nexecute = "maybe"\n')
        assert await permission_turn(engine, project_dir) == ([ALLOWED], 0)
        assert problems.messages == [
            f"{policy}:3: execute = 'maybe'; use one of allow, ask, reject (the rules read "
            "before stay in force)"
        ]
        assert engine.problems == problems.messages
    finally:
        await engine.close()


async def test_a_policy_never_good_asks_as_the_defaults_do(
    isolated_home: Path, config: Path, project_dir: Path
) -> None:
    (config / "policy.toml").write_text('[permissions]\nedit = "allow"\nexecute = "allow\n')
    engine = await Engine.open(isolated_home, handshake_timeout=15)
    try:
        (problem,) = engine.problems
        assert problem.startswith(f"{config / 'policy.toml'}:3: not valid TOML")
        decisions, asked = await permission_turn(engine, project_dir)
        assert asked == 1 and not any("Allowed" in text for text in decisions)
    finally:
        await engine.close()


def test_an_unknown_name_is_said_before_the_screen_opens() -> None:
    demo = AgentSpec("demo", ("demo",))
    known = [AgentInfo(demo, True)]
    assert unknown_agent(None, known) is None
    assert unknown_agent("demo", known) is None
    assert unknown_agent(AgentSpec("x y", ("x", "y")), known) is None  # a command runs as given
    assert unknown_agent("bench", known) == "no agent called 'bench'; known agents: demo"


# -- through a real service ----------------------------------------------------------------------


def test_agents_toml_edited_while_the_service_runs(
    service_home: Path, config: Path, project_dir: Path
) -> None:
    ok(cockpit("run", "--agent", "demo", "--yes", "hello", home=service_home, cwd=project_dir))
    service = service_pid(service_home)
    agents = config / "agents.toml"
    agents.write_text(BENCH)
    ran = ok(
        cockpit("run", "--agent", "bench", "--yes", "hello", home=service_home, cwd=project_dir)
    )
    assert ran.stdout.startswith("# Welcome to Cockpit")
    agents.write_text(BENCH + BROKEN_TOML)
    ran = ok(
        cockpit("run", "--agent", "bench", "--yes", "hello", home=service_home, cwd=project_dir)
    )
    assert ran.stdout.startswith("# Welcome to Cockpit")
    assert f"cockpit: {agents}:5: not valid TOML" in ran.stderr
    assert "(the agents read before stay as they were)" in ran.stderr
    unknown = cockpit("run", "--agent", "nope", "--yes", "hi", home=service_home, cwd=project_dir)
    assert unknown.returncode == 2
    assert "cockpit: no agent called 'nope'; known agents: bench, " in unknown.stderr
    assert "Traceback" not in unknown.stderr
    assert service_pid(service_home) == service, "the service was restarted"


def test_policy_toml_edited_while_the_service_runs(
    service_home: Path, config: Path, project_dir: Path
) -> None:
    """No terminal and no --yes: only the policy can allow the demo's edit."""
    ok(cockpit("run", "--agent", "demo", "--yes", "hello", home=service_home, cwd=project_dir))
    policy = config / "policy.toml"
    policy.write_text('[permissions]\nedit = "allow"\n')
    ran = ok(cockpit("run", "--agent", "demo", "permission", home=service_home, cwd=project_dir))
    assert f"* {ALLOWED}" in ran.stdout
    policy.write_text('[permissions]\nedit = "allow"\nexecute = "maybe"\n')
    ran = ok(cockpit("run", "--agent", "demo", "permission", home=service_home, cwd=project_dir))
    assert f"* {ALLOWED}" in ran.stdout, "the last good rules were dropped"
    assert f"cockpit: {policy}:3: execute = 'maybe'" in ran.stderr
    assert "(the rules read before stay in force)" in ran.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_an_agent_name_is_looked_up_where_the_agents_run(
    tmp_path: Path, isolated_home: Path, project_dir: Path
) -> None:
    """Through `--via`, the far side's agents.toml says what `--agent NAME` runs: this side
    knows no `bench`."""
    far = tmp_path / "far"
    (far / "config").mkdir(parents=True)
    (far / "config" / "agents.toml").write_text(BENCH)
    bridge = ["env", f"COCKPIT_HOME={far}", *cockpit_command("service", "--stdio")]
    with services_stopped(far), services_stopped(isolated_home):
        ran = cockpit(
            "--via",
            shlex.join(bridge),
            "run",
            "--agent",
            "bench",
            "--yes",
            "hello",
            home=isolated_home,
            cwd=project_dir,
        )
        ok(ran)
        assert ran.stdout.startswith("# Welcome to Cockpit")
        listed = ok(cockpit("ls", home=far)).stdout
        assert "hello" in listed
