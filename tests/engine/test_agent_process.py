"""The agent subprocess: environment, stderr drain and tail, whole-group stop."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec
from cockpit.engine.agent_process import TAIL_BYTES, AgentNotFound, AgentProcess
from tests.support.waiting import eventually


def spec(code: str, **env: str) -> AgentSpec:
    return AgentSpec(name="t", command=(sys.executable, "-c", code), env=env)


async def test_the_environment_given_reaches_the_agent_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent gets the environment the engine made for it (the user's, as the request
    that starts it has it): not this process's own."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-this-process")
    code = (
        "import os, sys; sys.stderr.write(os.environ.get('ANTHROPIC_API_KEY', '-') + ' ' "
        "+ os.environ['MINE'])"
    )
    given = {"PATH": os.environ["PATH"], "MINE": "the user's", "ANTHROPIC_API_KEY": "sk-user"}
    agent = await AgentProcess.spawn(spec(code), tmp_path, tmp_path / "log", given, 0o027)
    assert await agent.wait() == 0
    assert agent.stderr_tail() == "sk-user the user's"
    assert (tmp_path / "log").read_text() == "sk-user the user's"
    assert (tmp_path / "log").stat().st_mode & 0o777 == 0o600


async def test_without_an_environment_the_agent_gets_this_process_s_and_the_entrys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-key")
    code = "import os, sys; sys.stderr.write(os.environ['ANTHROPIC_API_KEY'] + ' ' + os.environ['EXTRA'])"
    agent = await AgentProcess.spawn(spec(code, EXTRA="from-entry"), tmp_path, tmp_path / "log")
    assert await agent.wait() == 0
    assert agent.stderr_tail() == "sk-test-key from-entry"


async def test_a_stderr_flood_never_blocks_and_the_tail_stays_bounded(tmp_path: Path) -> None:
    code = "import sys\nfor n in range(200000): sys.stderr.write(f'log line {n}\\n')\nprint('done')"
    agent = await AgentProcess.spawn(spec(code), tmp_path, tmp_path / "log")
    assert await asyncio.wait_for(agent.wait(), 30) == 0
    assert agent.stderr_tail(1) == "log line 199999"
    assert len(agent._tail) <= TAIL_BYTES
    assert (tmp_path / "log").stat().st_size > 2_000_000


async def test_stop_ends_grandchildren_too(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    code = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"  # an agent that ignores SIGTERM
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(60)\n"
    )
    agent = await AgentProcess.spawn(spec(code), tmp_path, tmp_path / "log")
    await eventually(lambda: marker.exists() and marker.read_text(), 4, "the grandchild's pid")
    grandchild = int(marker.read_text())
    code_ = await agent.stop(grace=0.3)
    assert code_ == -9  # it ignored SIGTERM, so SIGKILL ended it
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        stat = Path(f"/proc/{grandchild}/stat")
        if stat.exists() and stat.read_text().split()[2] == "Z":
            break  # killed, waiting for its (dead) parent's reaper
        await asyncio.sleep(0.02)
    else:
        pytest.fail("the grandchild outlived the stop")


async def test_a_missing_program_names_the_install_hint(tmp_path: Path) -> None:
    missing = AgentSpec(name="x", command=("no-such-agent-xyz",), install="pip install xyz")
    with pytest.raises(
        AgentNotFound, match=r"'no-such-agent-xyz' was not found\. To install it: pip install xyz"
    ):
        await AgentProcess.spawn(missing, tmp_path, tmp_path / "log")
