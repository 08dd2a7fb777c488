"""A starting agent keeps its chance while it works: real agent processes that work, sleep
or write while they start, through the engine and through `cockpit run`, in process and
through the service.

The agents here start as fresh interpreters (`real_spawn`): an agent forked by the tests'
fork server works in a process group other than the one Cockpit started, where its CPU
time cannot be seen.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, StartError, Status
from cockpit.engine.agent_process import AgentProcess
from cockpit.engine.core import HANDSHAKE_TIMEOUT
from cockpit.engine.group_cpu import group_cpu
from cockpit.engine.stall import STALL_ENV, STALL_LIMIT
from tests.engine.test_engine_restart import TINY, tiny
from tests.support.engine_helpers import open_engine
from tests.support.proc_stat import cpu_seconds
from tests.support.service_helpers import cockpit, service_pid, services_stopped
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

STALL = 2.5
"""The stall limit of these tests, in seconds: short, and still several samples long on a
busy machine."""

TINY_CMD = f"{sys.executable} {TINY}"

STALLED = f"did not answer and did nothing for {STALL:g} s while starting"

CHATTY = (
    sys.executable,
    "-I",
    "-S",
    str(Path(__file__).parents[1] / "support" / "chatty_agent.py"),
)
"""An agent that writes and never answers, with no CPU time to speak of."""

CEILING = 10.0
"""The ceiling of the tests of an agent that only writes: it would have stalled four times
over, were its output not counted."""

BURN = "import time\nwhile time.process_time() < 1: pass"
"""A child that uses one second of CPU time, however long that takes on a busy machine."""


# -- what is measured -------------------------------------------------------------------------


async def test_the_cpu_time_of_a_group_counts_the_child_that_does_the_work(
    tmp_path: Path,
) -> None:
    """A launcher (here a shell) that waits while its child works: the group's CPU time
    grows though the launcher's own does not, and keeps the child's once it is gone."""
    done = tmp_path / "done"
    script = f'"$0" -c "{BURN}"; touch {done}; sleep 60'
    shell = await asyncio.create_subprocess_exec(
        "sh", "-c", script, sys.executable, start_new_session=True
    )
    try:
        before = group_cpu(shell.pid)
        assert before is not None
        await eventually(
            lambda: (group_cpu(shell.pid) or 0) - before >= 0.5, 60, "the child's CPU time"
        )
        await eventually(done.exists, 60, "the child to end")
        assert (group_cpu(shell.pid) or 0) - before >= 0.9, "the reaped child's time was lost"
        assert cpu_seconds(shell.pid) < 0.2, "the shell itself did the work"
    finally:
        os.killpg(shell.pid, signal.SIGKILL)
        await shell.wait()


def test_a_group_that_does_not_exist_used_nothing() -> None:
    assert group_cpu(2**22 + 12345) == 0.0


async def test_what_an_agent_writes_is_counted(tmp_path: Path) -> None:
    spec = AgentSpec(name="sh", command=("sh", "-c", "printf 1234; printf 567 >&2; sleep 60"))
    agent = await AgentProcess.spawn(spec, tmp_path, tmp_path / "agent.log")
    try:
        await eventually(lambda: agent.written == 7, 30, "seven bytes counted")
        assert agent.pid == os.getpgid(agent.pid)
    finally:
        await agent.stop(grace=0.5)


# -- the engine -------------------------------------------------------------------------------


async def start_failure(home: Path, project: Path, spec: AgentSpec, ceiling: float) -> str:
    """Start the agent with the tests' stall limit and this ceiling; why it failed."""
    async with open_engine(home, timeout=ceiling) as (engine, _recorder):
        engine.stall_limit = STALL
        record = await engine.create_session(spec, project)
        with pytest.raises(StartError) as failed:
            await engine.start(record.id)
        assert engine.status(record.id) == Status.ERROR
        return str(failed.value)


@pytest.mark.real_spawn
async def test_an_agent_that_sleeps_while_it_starts_fails_at_the_stall_limit(
    data_home: Path, project_dir: Path
) -> None:
    began = time.monotonic()
    why = await start_failure(data_home, project_dir, tiny("--start", "sleep=300"), 90)
    assert STALLED in why
    assert "it used no CPU time and wrote nothing" in why
    assert time.monotonic() - began < 60, "it waited for the ceiling"


@pytest.mark.real_spawn
async def test_an_agent_that_writes_but_never_answers_fails_at_the_ceiling(
    data_home: Path, project_dir: Path
) -> None:
    began = time.monotonic()
    chatty = AgentSpec(name="chatty", command=CHATTY)
    why = await start_failure(data_home, project_dir, chatty, CEILING)
    assert f"did not answer within {CEILING:g} s while starting" in why
    assert "loading..." in why  # its last words on stderr
    assert time.monotonic() - began >= CEILING


@pytest.mark.real_spawn
async def test_an_agent_that_works_longer_than_the_stall_limit_starts(
    data_home: Path, project_dir: Path
) -> None:
    async with open_engine(data_home, timeout=60) as (engine, _recorder):
        engine.stall_limit = STALL
        record = await engine.create_session(tiny("--start", f"busy={3 * STALL}"), project_dir)
        await engine.start(record.id)
        assert engine.status(record.id) == Status.READY


async def test_a_load_may_take_longer_than_the_ceiling_while_the_agent_works(
    data_home: Path, project_dir: Path
) -> None:
    """A session/load replays a long history: it gets four times the ceiling in all, and
    the stall rule still watches it (the agent only writes meanwhile). The agent is a fork
    of the tests' server, which answers `initialize` at once, whatever the machine's load."""
    async with open_engine(data_home, timeout=120) as (engine, _recorder):
        engine.stall_limit = STALL
        spec = tiny("--caps", "load", "--load", "chatter=12")
        record = await engine.create_session(spec, project_dir)
        await engine.start(record.id)
        await engine.stop(record.id)
        began = time.monotonic()
        await engine.start(record.id, handshake_timeout=8)
        assert time.monotonic() - began >= 12
        assert engine.status(record.id) == Status.READY


async def test_the_stall_limit_comes_from_the_environment(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(STALL_ENV, "4.5")
    async with open_engine(data_home) as (engine, _recorder):
        assert engine.stall_limit == 4.5
        assert engine.problems == []
    monkeypatch.setenv(STALL_ENV, "soon")
    async with open_engine(data_home) as (engine, _recorder):
        assert engine.stall_limit == STALL_LIMIT
        assert engine.problems == [
            f"{STALL_ENV} must be a number of seconds above 0, not 'soon': an agent that "
            "does nothing while it starts fails after 30 s."
        ]


# -- `cockpit run`, in process and through the service -------------------------------------


def run_starting(home: Path, mode: str, agent: str, timeout: float) -> tuple[int, str, float]:
    """`cockpit run --agent-cmd AGENT` with the tests' stall limit and `--timeout`: its exit
    code, its output and how long it took."""
    extra = {STALL_ENV: str(STALL), **({"COCKPIT_LOCAL": "1"} if mode == "local" else {})}
    began = time.monotonic()
    ran = cockpit(
        "run", "--agent-cmd", agent, "--timeout", f"{timeout:g}", "hello",
        home=home, env_extra=extra, timeout=120,
    )  # fmt: skip
    if mode == "service":
        assert service_pid(home) is not None, "the run did not go through the service"
    return ran.returncode, ran.stdout + ran.stderr, time.monotonic() - began


MODES = pytest.mark.parametrize("mode", ["local", "service"])


@MODES
@pytest.mark.real_spawn
def test_run_fails_an_agent_that_does_nothing_at_the_stall_limit(
    data_home: Path, mode: str
) -> None:
    with services_stopped(data_home):
        code, output, took = run_starting(data_home, mode, f"{TINY_CMD} --start sleep=300", 90)
    assert code == 3, output
    assert STALLED in output
    assert "did not answer within" not in output
    assert took < 60, "the run waited for its --timeout"


@MODES
@pytest.mark.real_spawn
def test_run_fails_an_agent_that_only_writes_at_its_timeout(data_home: Path, mode: str) -> None:
    with services_stopped(data_home):
        code, output, took = run_starting(data_home, mode, shlex.join(CHATTY), CEILING)
    assert code == 3, output
    assert f"did not answer within {CEILING:g} s while starting" in output
    assert "did nothing" not in output
    assert took >= CEILING


@MODES
@pytest.mark.real_spawn
def test_run_starts_an_agent_that_works_longer_than_the_stall_limit(
    data_home: Path, mode: str
) -> None:
    with services_stopped(data_home):
        code, output, _took = run_starting(
            data_home, mode, f"{TINY_CMD} --start busy={3 * STALL}", 90
        )
    assert code == 0, output
    assert "ok" in output


def test_the_timeout_is_the_ceiling_and_says_so(tmp_path: Path) -> None:
    assert HANDSHAKE_TIMEOUT == 120
    assert STALL_LIMIT == 30
    helped = cockpit("run", "--help", home=tmp_path / "home")
    words = " ".join(helped.stdout.split())
    assert "seconds the agent may take to start, at most (default 120)" in words
    assert "writes nothing for 30 s (COCKPIT_STALL_LIMIT) fails sooner" in words


@pytest.mark.parametrize("given", ["0", "-5", "soon", "nan"])
def test_a_timeout_that_is_not_a_number_of_seconds_is_refused(tmp_path: Path, given: str) -> None:
    ran = cockpit("run", "--timeout", given, "hello", home=tmp_path / "home")
    assert ran.returncode == 2
    assert f"argument --timeout: must be a number of seconds above 0, not '{given}'" in ran.stderr
    assert "Traceback" not in ran.stderr
