"""Signing an agent in, against the engine in the test's process and through a service: a
tiny real agent that demands each way (`--auth`), the session showing the agent's ways by
name instead of a raw error, and a key typed for one session found nowhere on disk."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, EngineAPI, Row, ShellRun, SignIn, StartError, read_shell_run
from cockpit.engine.core import Engine
from tests.support.ui_service_helpers import Engines

TINY = str(Path(__file__).resolve().parents[1] / "support" / "tiny_agent.py")
SECRET = "sk-tiny-7f3a9c21e5b84d06"


def tiny(*flags: str) -> AgentSpec:
    return AgentSpec(name="tiny", command=(sys.executable, TINY, *flags), title="tiny")


async def texts(engine: EngineAPI, session: str) -> str:
    return "\n".join(row.text for row in await engine.rows(session))


async def asked(engine: EngineAPI, session: str) -> SignIn:
    with pytest.raises(StartError):
        await engine.start(session)
    needed = await engine.sign_in(session)
    assert needed is not None
    return needed


def files_holding(folder: Path, secret: bytes) -> list[str]:
    """Every file under `folder` whose bytes hold `secret`."""
    return [
        str(path)
        for path in folder.rglob("*")
        if path.is_file() and not path.is_symlink() and secret in path.read_bytes()
    ]


async def test_an_env_var_sign_in_keeps_the_key_for_the_session_only(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny("--auth", "env:TINY_KEY"), project_dir)
        needed = await asked(engine, record.id)
        (method,) = needed.methods
        assert (method.id, method.kind, method.variables) == ("tiny-key", "env_var", ("TINY_KEY",))
        said = await texts(engine, record.id)
        assert "asks you to sign in" in said and "Use TINY_KEY: Set TINY_KEY to your key." in said
        assert "/login" in said
        with pytest.raises(ValueError, match="needs a value for TINY_KEY"):
            await engine.authenticate(record.id, "tiny-key", {})
        with pytest.raises(ValueError, match="offers no sign-in method 'nope'"):
            await engine.authenticate(record.id, "nope", {})
        assert await engine.authenticate(record.id, "tiny-key", {"TINY_KEY": SECRET}) == (
            "Signed in with Use TINY_KEY."
        )
        assert await engine.sign_in(record.id) is None
        assert await engine.prompt(record.id, "hello") == "end_turn"
        await engine.stop(record.id)  # a restart signs in again with the key it was given
        assert await engine.prompt(record.id, "again") == "end_turn"
    finally:
        await engine.close()
    assert files_holding(engines.home, SECRET.encode()) == []
    assert files_holding(project_dir, SECRET.encode()) == []


async def test_a_prompt_refused_until_sign_in_shows_the_ways(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        spec = tiny("--auth", "env:TINY_KEY", "--auth-at", "prompt")
        record = await engine.create_session(spec, project_dir)
        assert await engine.prompt(record.id, "hello") == "error"
        needed = await engine.sign_in(record.id)
        assert needed is not None and [m.name for m in needed.methods] == ["Use TINY_KEY"]
        said = await texts(engine, record.id)
        assert "sign in to use the tiny agent" in said and "failed the turn" not in said
        await engine.authenticate(record.id, "tiny-key", {"TINY_KEY": SECRET})
        assert await engine.prompt(record.id, "hello") == "end_turn"
    finally:
        await engine.close()


async def test_a_terminal_login_that_failed_then_worked(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny("--auth", "terminal"), project_dir)
        needed = await asked(engine, record.id)
        (method,) = needed.methods
        assert method.kind == "terminal" and method.args == ("--login",)
        # Signing in before the login ran fails, clearly, and the agent asks again.
        with pytest.raises(StartError):
            await engine.authenticate(record.id, method.id)
        said = await texts(engine, record.id)
        assert "Signing in with Log in in a terminal failed: " in said
        assert "run the login first" in said
        again = await engine.sign_in(record.id)
        assert again is not None and "failed" in again.message
        # The login the method names, run where the agent runs, then a sign-in that works.
        spec = engine.agent_of(await engine.session(record.id))
        login = await asyncio.create_subprocess_exec(
            *method.login(spec.command),
            cwd=project_dir,
            env={**os.environ, **(method.env or {})},
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await login.communicate()
        assert login.returncode == 0 and b"logged in" in out
        assert (project_dir / "tiny-login").read_text() == "yes"
        await engine.authenticate(record.id, method.id)
        assert await engine.prompt(record.id, "hello") == "end_turn"
    finally:
        await engine.close()


def with_env(spec: AgentSpec, **env: str) -> AgentSpec:
    return AgentSpec(spec.name, spec.command, spec.title, env)


async def shell_row(engine: EngineAPI, session: str, key: str) -> Row:
    row = await engine.row(session, key)
    assert row is not None
    return row


async def until_row(engine: EngineAPI, session: str, key: str, holds: str) -> Row:
    """The login's row once its text or its state holds `holds`."""
    for _ in range(300):
        row = await shell_row(engine, session, key)
        if holds in row.text or holds == (row.payload or {}).get("state"):
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"the login's row never held {holds!r}: {row.text!r}")


async def test_a_terminal_login_run_where_the_agents_run_takes_a_pasted_code(
    engines: Engines, project_dir: Path
) -> None:
    """The login runs in the engine (through the service: where the agents run), as a
    card that asks for the code a browser page shows; the line sent to it reaches it and
    never the agent, the card never prints it, and the agent is signed in once the login
    ends well."""
    engine = await engines.factory()()
    code = "TINY-7f3a-9c21"
    try:
        spec = with_env(tiny("--auth", "terminal"), TINY_LOGIN_CODE=code)
        record = await engine.create_session(spec, project_dir)
        (method,) = (await asked(engine, record.id)).methods
        assert not await engine.send_input(record.id, "nothing reads this")
        key = await engine.run_login(record.id, method.id)
        row = await until_row(engine, record.id, key, "paste the code it shows")
        assert row.kind == "shell" and "https://login.example.com/device" in row.text
        run = read_shell_run(row.payload)
        assert isinstance(run, ShellRun) and run.takes_input and "--login" in run.command
        assert await engine.send_input(record.id, code)
        ended = await until_row(engine, record.id, key, "exited")
        assert "logged in" in ended.text and code not in ended.text
        assert (project_dir / "tiny-login").read_text() == code
        for _ in range(100):  # signing in follows the login's end
            if await engine.sign_in(record.id) is None:
                break
            await asyncio.sleep(0.1)
        assert await engine.sign_in(record.id) is None
        assert "Signed in with Log in in a terminal." in await texts(engine, record.id)
        assert await engine.prompt(record.id, "hello") == "end_turn"
        assert code not in await texts(engine, record.id)
    finally:
        await engine.close()
    assert files_holding(engines.home, code.encode()) == []


async def test_a_terminal_login_given_a_wrong_code_signs_nothing_in(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        spec = with_env(tiny("--auth", "terminal"), TINY_LOGIN_CODE="right")
        record = await engine.create_session(spec, project_dir)
        (method,) = (await asked(engine, record.id)).methods
        with pytest.raises(ValueError, match="no terminal login 'nope'"):
            await engine.run_login(record.id, "nope")
        key = await engine.run_login(record.id, method.id)
        await until_row(engine, record.id, key, "paste the code")
        assert await engine.send_input(record.id, "wrong-code-5e1b")  # printed back, masked
        ended = await until_row(engine, record.id, key, "exited")
        assert "That code is wrong: [masked input]" in ended.text
        assert "wrong-code-5e1b" not in ended.text
        assert (ended.payload or {}).get("exitCode") == 1
        await asyncio.sleep(0.5)
        assert await engine.sign_in(record.id) is not None, "the agent still asks"
        # a login left waiting is killed like a command (Esc)
        key = await engine.run_login(record.id, method.id)
        await until_row(engine, record.id, key, "paste the code")
        assert await engine.stop_shell(record.id)
        await until_row(engine, record.id, key, "killed")
        assert not await engine.send_input(record.id, "right")
    finally:
        await engine.close()


async def test_a_sign_in_that_always_fails_leaves_the_session_usable(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny("--auth", "fails"), project_dir)
        needed = await asked(engine, record.id)
        with pytest.raises(StartError):
            await engine.authenticate(record.id, needed.methods[0].id)
        said = await texts(engine, record.id)
        assert "Signing in with Never works failed: " in said
        assert "the sign-in server said no" in said
        assert "Traceback" not in said
        assert (await engine.sign_in(record.id)) is not None
        await engine.add_notice(record.id, "still here")  # the session takes rows still
    finally:
        await engine.close()


async def test_a_browser_sign_in_shows_its_address_and_never_opens_it(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny("--auth", "browser"), project_dir)
        await asked(engine, record.id)
        await engine.authenticate(record.id, "tiny-browser")
        said = await texts(engine, record.id)
        assert "open this address in your browser: https://login.example.com/device?code=TINY" in (
            said
        )
        assert await engine.prompt(record.id, "hello") == "end_turn"
    finally:
        await engine.close()


async def test_logout_where_the_agent_offers_none_says_so(
    engines: Engines, project_dir: Path
) -> None:
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny(), project_dir)
        with pytest.raises(ValueError, match="offers no sign-out"):
            await engine.logout(record.id)
    finally:
        await engine.close()


async def test_logout_signs_the_agent_out_and_it_asks_again(
    engines: Engines, project_dir: Path
) -> None:
    """The agent offers `logout`: Cockpit asks it, forgets the key it was given, and the
    agent, signed out, asks to sign in at its next prompt."""
    engine = await engines.factory()()
    try:
        spec = tiny("--auth", "env:TINY_KEY", "--auth-at", "prompt", "--caps", "logout")
        record = await engine.create_session(spec, project_dir)
        assert await engine.prompt(record.id, "hello") == "error"
        await engine.authenticate(record.id, "tiny-key", {"TINY_KEY": SECRET})
        assert await engine.prompt(record.id, "hello") == "end_turn"
        said = await engine.logout(record.id)
        assert said.startswith("Signed out")
        assert said in await texts(engine, record.id)
        assert await engine.prompt(record.id, "again") == "error"
        assert await engine.sign_in(record.id) is not None
        await engine.stop(record.id)  # the key went with the sign-out: no restart has it
        assert await engine.prompt(record.id, "again") == "error"
    finally:
        await engine.close()


async def test_cockpit_declares_terminal_sign_in(engines: Engines, project_dir: Path) -> None:
    """claude-agent-acp lists its sign-in ways only to a client that says it can run them."""
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny(), project_dir)
        assert await engine.prompt(record.id, "client-caps") == "end_turn"
        said = await texts(engine, record.id)
        assert '"auth": {"terminal": true}' in said and '"terminal-auth": true' in said
    finally:
        await engine.close()


async def test_a_browser_sign_in_may_wait_on_the_user_past_the_stall_limit(
    data_home: Path, project_dir: Path
) -> None:
    """An agent waiting for the user to finish in the browser does nothing (no CPU, no
    output): that is no hung start."""
    engine = await Engine.open(data_home, stall_limit=1.0, handshake_timeout=15)
    try:
        spec = tiny("--auth", "browser")
        spec = AgentSpec(spec.name, spec.command, spec.title, {"TINY_BROWSER_WAIT": "3"})
        record = await engine.create_session(spec, project_dir)
        await asked(engine, record.id)
        await engine.authenticate(record.id, "tiny-browser")
        assert await engine.prompt(record.id, "hello") == "end_turn"
    finally:
        await engine.close()


async def test_a_key_method_sends_the_key_in_the_request_only(
    engines: Engines, project_dir: Path
) -> None:
    """gemini-cli's way: the key goes in `authenticate`, not in the environment."""
    engine = await engines.factory()()
    try:
        record = await engine.create_session(tiny("--auth", "key"), project_dir)
        (method,) = (await asked(engine, record.id)).methods
        assert (method.kind, method.fields) == ("key", ("api-key",))
        await engine.authenticate(record.id, method.id, {"api-key": SECRET})
        assert await engine.prompt(record.id, "key-length") == "end_turn"
        assert f"key: {len(SECRET)} characters" in await texts(engine, record.id)
    finally:
        await engine.close()
    assert files_holding(engines.home, SECRET.encode()) == []
