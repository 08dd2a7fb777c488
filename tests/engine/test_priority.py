"""Agents and the commands they run work at a lower CPU priority than Cockpit, their
scheduling group (Linux autogroup: each runs in a session of its own) included."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import AgentSpec
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.priority import MAX_NICE, autogroup_nice, lowered
from cockpit.engine.terminals import Terminals

AUTOGROUPS = Path("/proc/self/autogroup").exists()
SLEEPER = (sys.executable, "-c", "import time; time.sleep(60)")


def own_group_nice() -> int:
    nice = autogroup_nice(Path("/proc/self/autogroup").read_text())
    assert nice is not None
    return nice


def group_nice(pid: int) -> int | None:
    return autogroup_nice(Path(f"/proc/{pid}/autogroup").read_text())


def test_the_autogroup_line_is_read() -> None:
    assert autogroup_nice("/autogroup-8446 nice 0\n") == 0
    assert autogroup_nice("/autogroup-1 nice -5") == -5
    assert autogroup_nice("/autogroup-1 nice 19") == 19
    assert autogroup_nice("") == 0  # the root group, which the kernel leaves blank
    assert autogroup_nice("\n") == 0
    assert autogroup_nice("nonsense") is None


@given(st.integers(-20, MAX_NICE), st.integers(0, 40))
def test_lowering_never_raises_priority_and_stays_in_range(current: int, by: int) -> None:
    result = lowered(current, by)
    assert current <= result <= max(current, MAX_NICE)
    assert result == min(MAX_NICE, current + by) or result == current


async def spawned(tmp_path: Path, nice: int) -> AgentProcess:
    spec = AgentSpec(name="sleeper", command=SLEEPER, nice=nice)
    return await AgentProcess.spawn(spec, tmp_path, tmp_path / "logs" / "sleeper.log")


async def test_an_agent_runs_below_cockpit_and_so_does_its_group(tmp_path: Path) -> None:
    agent = await spawned(tmp_path, 7)
    try:
        pid = agent.process.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == lowered(
            os.getpriority(os.PRIO_PROCESS, 0), 7
        )
        if AUTOGROUPS:
            assert group_nice(pid) == lowered(own_group_nice(), 7)
    finally:
        await agent.stop()


async def test_nice_zero_keeps_cockpits_priority(tmp_path: Path) -> None:
    agent = await spawned(tmp_path, 0)
    try:
        pid = agent.process.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == os.getpriority(os.PRIO_PROCESS, 0)
        if AUTOGROUPS:
            assert group_nice(pid) == own_group_nice()
    finally:
        await agent.stop()


@pytest.mark.skipif(not AUTOGROUPS, reason="no autogroup scheduling here")
async def test_a_command_the_agent_runs_gets_the_agents_priority(tmp_path: Path) -> None:
    terminals = Terminals(tmp_path, dict(os.environ), nice=4)
    try:
        terminal = await terminals.create(sys.executable, ["-c", "import time; time.sleep(60)"])
        pid = terminal.process.pid
        await asyncio.sleep(0)
        assert os.getpriority(os.PRIO_PROCESS, pid) == lowered(
            os.getpriority(os.PRIO_PROCESS, 0), 4
        )
        assert group_nice(pid) == lowered(own_group_nice(), 4)
    finally:
        await terminals.close()
