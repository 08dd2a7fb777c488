"""The user's environment as a command sends it: its rules, pure (what an agent starts with,
what a hello may carry, what a bridge puts in), and an agent started by the engine with it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import AgentSpec
from cockpit.engine.core import Engine
from cockpit.environment import (
    SERVICE_OWNED,
    Environment,
    agent_variables,
    current,
    current_umask,
    runs_our_python,
)
from cockpit.remote.bridge import with_environment
from tests.engine.test_engine_restart import TINY

names = st.text(st.characters(min_codepoint=65, max_codepoint=90) | st.just("_"), min_size=1)
variables = st.dictionaries(names, st.text(max_size=20), max_size=8)
owned = st.sampled_from([*SERVICE_OWNED, "COCKPIT_HOME", "COCKPIT_DEMO_SLOW_DELAY"])


def test_an_environment_shows_no_value_in_its_repr() -> None:
    """A log line or a traceback that prints one names no key and no value."""
    world = Environment({"ANTHROPIC_API_KEY": "sk-secret-value"}, 0o022)
    for text in (repr(world), str(world), f"{world}", repr([world])):
        assert "sk-secret-value" not in text
        assert "ANTHROPIC_API_KEY" not in text
    assert repr(world) == "Environment(1 variables, umask 022)"


@given(variables, st.none() | st.integers(0, 0o777))
def test_an_environment_crosses_the_wire_unchanged(
    values: dict[str, str], umask: int | None
) -> None:
    world = Environment(values, umask)
    assert Environment.from_wire(json.loads(json.dumps(world.to_wire()))) == world


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=12,
    )
)
def test_a_hello_s_environment_that_does_not_fit_is_none_or_only_strings(data: object) -> None:
    """A client's hello is read, never trusted: whatever it holds, what is kept is an
    environment of strings with a umask that is one."""
    world = Environment.from_wire(data)
    if world is None:
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in world.variables.items())
    assert world.umask is None or 0 <= world.umask <= 0o777


def test_a_variable_named_with_an_equals_sign_is_dropped() -> None:
    world = Environment.from_wire({"variables": {"A=B": "x", "C": "y", "": "z"}, "umask": True})
    assert world == Environment({"C": "y"}, None)


@given(variables, variables, variables, variables, owned, st.text(max_size=5))
def test_a_bundled_agent_takes_python_and_cockpit_variables_from_the_service(
    user: dict[str, str],
    entry: dict[str, str],
    service: dict[str, str],
    extra: dict[str, str],
    name: str,
    value: str,
) -> None:
    user = {**user, name: "the client's " + value}
    service = {**service, name: "the service's " + value}
    bundled = agent_variables(user, entry, service, bundled=True, extra=extra)
    other = agent_variables(user, entry, service, bundled=False, extra=extra)
    later = {**entry, **extra}
    assert bundled.get(name) == later.get(name, service[name])
    assert other.get(name) == later.get(name, user[name])
    for key, kept in user.items():  # the rest is the user's, under the entry and extra
        if key != name and not key.startswith("COCKPIT_") and key not in SERVICE_OWNED:
            assert bundled[key] == later.get(key, kept)
    assert not any(
        key.startswith("COCKPIT_") and key not in later and service.get(key) != bundled[key]
        for key in bundled
    )


def test_only_this_interpreter_s_commands_are_bundled() -> None:
    assert runs_our_python((sys.executable, "agent.py"))
    assert not runs_our_python(("gemini", "--acp"))
    assert not runs_our_python(())


def test_the_umask_is_read_without_changing_it() -> None:
    before = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        assert current().umask == 0o027
    finally:
        os.umask(before)


def test_a_bridge_puts_its_own_environment_into_the_hello_only() -> None:
    """What a client on another machine says of its environment is replaced by this
    machine's; other lines pass as they are, byte for byte."""
    ours = Environment({"HOME": "/far/side"}, 0o022)
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "cockpit/hello",
        "params": {"protocol": 3, "environment": {"variables": {"LOCAL": "secret"}}},
    }
    line, was_hello = with_environment(json.dumps(hello).encode() + b"\n", ours)
    assert was_hello
    assert line.endswith(b"\n")
    sent = json.loads(line)
    assert sent["params"]["environment"] == ours.to_wire()
    assert sent["params"]["protocol"] == 3
    assert b"secret" not in line
    for other in (b'{"jsonrpc":"2.0","id":1,"method":"cockpit/call"}\n', b"not json\n", b"[1]\n"):
        assert with_environment(other, ours) == (other, False)


def proc_environ(pid: int) -> dict[str, str]:
    """The environment process `pid` was started with."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode() for key, value in pairs}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_the_engine_starts_an_agent_with_the_environment_of_the_request(
    tmp_path: Path,
) -> None:
    """The agent gets the request's variables and umask; as a bundled agent (this
    interpreter), its Python and Cockpit variables are the engine's own."""
    engine = await Engine.open(tmp_path / "home")
    engine.environment_required = True
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY), title="tiny")
        record = await engine.create_session(spec, tmp_path)
        world = Environment(
            {
                "PATH": os.environ["PATH"],
                "FROM_THE_CLIENT": "yes",
                "PYTHONPATH": "client",
                "GITHUB_TOKEN": "a secret of the client's",
            },
            0o027,
        )
        await engine.start(record.id, env=world)
        live = engine._live[record.id]
        assert live.process is not None
        started = proc_environ(live.process.process.pid)
        assert started["FROM_THE_CLIENT"] == "yes"
        assert started.get("PYTHONPATH") == os.environ.get("PYTHONPATH")
        assert started["COCKPIT_DATA_DIR"] == str(tmp_path / "home")
        assert live.requests._terminals.umask == 0o027
        assert live.requests._terminals.env["FROM_THE_CLIENT"] == "yes"
        assert started["GITHUB_TOKEN"] == "a secret of the client's"  # the agent's own
        assert "GITHUB_TOKEN" not in live.requests._terminals.env  # not its commands'
        assert "ANTHROPIC_API_KEY" not in live.requests._terminals.env
    finally:
        await engine.close()


async def test_a_start_without_an_environment_is_refused_when_one_is_required(
    tmp_path: Path,
) -> None:
    """In the service, an agent never runs with the service's own environment: a start
    no client's environment came with fails, and its row says why."""
    engine = await Engine.open(tmp_path / "home")
    engine.environment_required = True
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY), title="tiny")
        record = await engine.create_session(spec, tmp_path)
        with pytest.raises(Exception, match="brought no environment"):
            await engine.start(record.id)
        assert engine.status(record.id) == "error"
        row = await engine.last_row(record.id, "error")
        assert row is not None
        assert "brought no environment" in row.text
    finally:
        await engine.close()


@pytest.mark.parametrize("mask", [0o077, 0o002], ids=["077", "002"])
async def test_a_file_the_agent_writes_gets_the_umask_of_the_request(
    tmp_path: Path, mask: int
) -> None:
    """fs/write_text_file makes a new file (and its new folders) with the modes the
    request's umask gives, not with the engine's own: the service runs with the umask it
    started with, which is not the user's command's."""
    project = tmp_path / "project"
    project.mkdir()
    own = os.umask(0o022)
    engine = await Engine.open(tmp_path / "home")
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY), title="tiny")
        record = await engine.create_session(spec, project)
        world = Environment({"PATH": os.environ["PATH"]}, mask)
        assert await engine.prompt(record.id, "write=made/notes.txt", env=world) == "end_turn"
    finally:
        await engine.close()
        os.umask(own)
    assert (project / "made" / "notes.txt").read_text() == "tiny"
    assert (project / "made" / "notes.txt").stat().st_mode & 0o777 == 0o666 & ~mask
    assert (project / "made").stat().st_mode & 0o777 == 0o777 & ~mask
