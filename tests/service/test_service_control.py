"""The command line as a control plane, with real processes on a real service: `cockpit run`
and `ls` through the service, a client that watches another process's run live, `send`,
`wait`, `answer` and `events` (in order, to the end of a turn, ended by a signal or by the
service going away)."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import EngineAPI, ResyncEvent, SessionEvent, Status, StatusEvent
from cockpit.cli.events import event_json
from cockpit.client import Reach, open_engine
from tests.support.engine_helpers import Recorder, assert_live_equals_stored
from tests.support.forked_cockpit import run_command
from tests.support.service_helpers import (
    COCKPIT_TIMEOUT,
    cockpit,
    cockpit_command,
    cockpit_env,
    service_pid,
    spawn_cockpit,
)
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

HELLO = ("run", "--agent", "demo", "--yes", "hello")
"""A short turn in a new session (the demo agent's tour), which starts the service; its
agent stops when the turn ends."""

WELCOME = "# Welcome to Cockpit"
"""How the demo agent's tour begins."""

NOTES = "Write demo-notes.md"
"""The title of the one question the demo agent's `permission` scenario asks."""


@pytest.fixture
async def client(service_home: Path) -> AsyncIterator[tuple[EngineAPI, Recorder]]:
    """A client of the home's service in the test's process (it starts the service), with a
    recorder of what it receives."""
    engine = await open_engine(service_home, reach=Reach())
    assert engine.detaches, "open_engine gave an engine in this process, not the service's"
    recorder = Recorder()
    engine.subscribe(recorder)
    try:
        yield engine, recorder
    finally:
        await engine.close()


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`result`, once it is known to have exited 0 (else fail with its output)."""
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


def listed(home: Path) -> dict[str, str]:
    """What `cockpit ls --json` says: session id -> status."""
    return {s["id"]: s["status"] for s in json.loads(ok(cockpit("ls", "--json", home=home)).stdout)}


def stored_rows(home: Path, session: str) -> list[dict[str, Any]]:
    """A session's rows, as `cockpit show --json` prints them."""
    return list(json.loads(ok(cockpit("show", session, "--json", home=home)).stdout)["rows"])


def new_session(home: Path) -> str:
    """A session that has run one turn and whose agent still runs (`cockpit run --keep`,
    which rejects what it asks: no terminal)."""
    ok(cockpit("run", "--keep", "--agent", "demo", "hi", home=home))
    (session,) = listed(home)
    return session


async def in_thread(*args: str, home: Path, stdin: str | None = None) -> Any:
    """`cockpit ARGS` run to its end without blocking this test's event loop (a client
    of the service lives in it)."""
    return await asyncio.to_thread(
        run_command,
        args,
        env=cockpit_env(home),
        cwd=home.parent,
        stdin=stdin or "",
        timeout=COCKPIT_TIMEOUT,
    )


class Lines:
    """The JSON lines a `cockpit events` process prints, read as they come."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.seen: list[dict[str, Any]] = []
        self._pending = b""

    def until(self, wanted: Any, timeout: float = 30) -> dict[str, Any]:
        """Read until a line for which `wanted(line)` is true; that line."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        checked = 0
        while True:
            for line in self.seen[checked:]:
                if wanted(line):
                    return line
            checked = len(self.seen)
            left = deadline - time.monotonic()
            ready, _, _ = select.select([descriptor], [], [], max(0.0, left))
            assert ready, f"waited {timeout:g} s for an event line; so far: {self.seen}"
            chunk = os.read(descriptor, 65536)
            assert chunk, f"`cockpit events` ended; so far: {self.seen}"
            self._pending += chunk
            *complete, self._pending = self._pending.split(b"\n")
            self.seen += [json.loads(line) for line in complete if line]


def spawn_events(home: Path, *args: str) -> subprocess.Popen[bytes]:
    """`cockpit events ARGS` running, its output unbuffered bytes read by `Lines`."""
    return subprocess.Popen(
        cockpit_command("events", *args),
        env=cockpit_env(home),
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )


def ended_cleanly(process: subprocess.Popen[bytes], how: int) -> tuple[int, str]:
    """Send `how` (a signal) to a process and wait for it; its exit code and stderr."""
    process.send_signal(how)
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"`cockpit events` did not end on signal {how}")
    assert process.stderr is not None
    return process.returncode, process.stderr.read().decode()


# -- run and ls through the service -------------------------------------------------------------


async def test_run_goes_through_the_service_and_ls_shows_live_statuses(service_home: Path) -> None:
    ran = ok(cockpit("run", "--keep", *HELLO[1:], home=service_home))  # its agent goes on: ready
    assert ran.stdout.startswith(WELCOME)
    assert service_pid(service_home) is not None, "`cockpit run` started no service"
    (session,) = listed(service_home)
    assert listed(service_home) == {session: Status.READY}

    ok(cockpit("service", "stop", "--yes", home=service_home))
    assert service_pid(service_home) is None
    without = ok(cockpit("ls", home=service_home)).stdout
    assert session in without, "ls without a service (a read in its own process) lost it"
    assert service_pid(service_home) is None, "ls started a service"


async def test_run_gives_the_agent_its_timeout_through_the_service(service_home: Path) -> None:
    """`--timeout` reaches the service's engine: an agent that never answers `initialize`
    fails the run after that long, not after the service's own 120 s."""
    demo = Path(__file__).resolve().parents[2] / "acp" / "demo_agent.py"
    hanging = f"{sys.executable} {demo} --hang-initialize"
    started = time.monotonic()
    ran = cockpit("run", "--agent-cmd", hanging, "--timeout", "1.5", "hello", home=service_home)
    assert time.monotonic() - started < 20, "the run waited for the service's own timeout"
    assert ran.returncode == 3, ran
    assert "did not answer within 1.5 s while starting" in ran.stderr, ran.stderr
    assert service_pid(service_home) is not None, "the run did not go through the service"


async def test_ls_says_what_a_local_cockpit_runs_and_that_a_killed_one_runs_nothing(
    service_home: Path,
) -> None:
    """Sessions run by a `--local` Cockpit are its word (the service does not run them);
    once that Cockpit is killed mid-turn, its stored "working" is stale: nothing runs."""
    local = {"COCKPIT_LOCAL": "1"}
    runner = spawn_cockpit("run", "--agent", "demo", "slow", home=service_home, env_extra=local)
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline().startswith("# A slow reply")
        (session,) = listed(service_home)  # through the service, which this run does not use
        assert listed(service_home)[session] == Status.WORKING
        without = ok(cockpit("ls", home=service_home, env_extra=local)).stdout
        assert f"{session}  {Status.WORKING}" in without
    finally:
        runner.kill()
        runner.wait()
    assert listed(service_home)[session] == Status.CLOSED
    without = ok(cockpit("ls", home=service_home, env_extra=local)).stdout
    assert f"{session}  {Status.CLOSED}" in without, without


async def test_a_killed_client_leaves_its_turn_running_and_ls_says_so_live(
    service_home: Path,
) -> None:
    session = new_session(service_home)
    follower = spawn_cockpit("send", session, "slow", "--wait", home=service_home)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline().startswith("# A slow reply")
    finally:
        follower.kill()  # the client dies mid-turn, as a closed terminal's TUI does
        follower.wait()
    assert listed(service_home)[session] == Status.WORKING

    gave_up = cockpit("wait", session, "--until", "idle", "--timeout", "1", home=service_home)
    assert gave_up.returncode == 124, gave_up
    assert f"gave up after 1 s: {session} is still working, not idle" in gave_up.stderr

    done = ok(cockpit("wait", session, "--until", "done", home=service_home))
    assert done.stdout.strip() == f"{session} ready"
    assert listed(service_home)[session] == Status.READY
    *_, prompt, reply = stored_rows(service_home, session)
    assert (prompt["kind"], prompt["text"]) == ("user", "slow")
    assert reply["kind"] == "agent" and reply["text"].startswith("# A slow reply")


async def test_a_run_whose_service_is_killed_says_so_without_a_traceback(
    service_home: Path,
) -> None:
    """`cockpit run` streaming when its service dies: it ends at once, exit 6, one line that
    says the service went away without a word (not stopped by the user), no traceback;
    what was stored stays readable."""
    run = spawn_cockpit("run", "--agent", "demo", "--yes", "slow", home=service_home)
    try:
        assert run.stdout is not None
        assert run.stdout.readline().startswith("# A slow reply")
        pid = service_pid(service_home)
        assert pid is not None, "`cockpit run` started no service"
        os.kill(pid, signal.SIGKILL)
        _out, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 6, err
    assert "the Cockpit service went away without a word" in err
    assert "it was killed or it crashed" in err
    assert "Traceback" not in err, err
    (session,) = listed(service_home)
    prompt, *_ = stored_rows(service_home, session)
    assert (prompt["kind"], prompt["text"]) == ("user", "slow")


# -- a client sees another process's run live ----------------------------------------------------


async def test_an_attached_client_sees_cockpit_run_stream_live(
    service_home: Path, client: tuple[EngineAPI, Recorder]
) -> None:
    engine, recorder = client
    created: list[str] = []
    ends: list[str] = []

    def listen(event: object) -> None:
        if isinstance(event, SessionEvent) and event.session not in created:
            created.append(event.session)
        elif isinstance(event, StatusEvent) and event.turn_ended:
            ends.append(event.session)

    engine.subscribe(listen)
    run = spawn_cockpit("run", "--agent", "demo", "--yes", "bench", home=service_home)
    try:
        await eventually(lambda: created, what="the session `cockpit run` creates")
        session = created[0]
        engine.show(session)  # as the TUI does when it shows a session: frames, then a read
        recorder.view(session).merge_page(await engine.rows(session))
        # Frames are gathered and joined on the wire, so count what they carried.
        view = recorder.view(session)
        await eventually(
            lambda: sum(bubble.length for bubble in view) > 2_000,
            60,
            "the first 2,000 characters while `cockpit run` streams",
        )
        assert run.poll() is None, "the run ended before the client saw its frames"
        out, err = await asyncio.to_thread(run.communicate, timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    await eventually(lambda: session in ends, what="the end of the turn")
    rows = await engine.rows(session)
    assert_live_equals_stored(recorder, session, rows)
    assert rows[-1].text in out


# -- send, wait ------------------------------------------------------------------------------


async def test_send_returns_once_the_service_has_stored_the_prompt(
    service_home: Path, tmp_path: Path
) -> None:
    session = new_session(service_home)
    sent = ok(cockpit("send", session[:4], "hello", "there", home=service_home))
    assert f"sent to {session}" in sent.stderr
    users = [row["text"] for row in stored_rows(service_home, session) if row["kind"] == "user"]
    assert users == ["hi", "hello there"], "`cockpit send` returned before the prompt was stored"
    ok(cockpit("wait", session, home=service_home))

    prompt_file = tmp_path / "prompt.md"
    prompt_file.write_text("from a file\n")
    ok(cockpit("send", session, "--file", str(prompt_file), home=service_home))
    ok(cockpit("wait", session, home=service_home))
    piped = await in_thread("send", session, "--file", "-", home=service_home, stdin="from stdin\n")
    ok(piped)
    ok(cockpit("wait", session, home=service_home))
    users = [row["text"] for row in stored_rows(service_home, session) if row["kind"] == "user"]
    assert users == ["hi", "hello there", "from a file\n", "from stdin\n"]
    assert listed(service_home)[session] == Status.READY

    nothing = cockpit("send", session, home=service_home)
    assert nothing.returncode == 2 and "nothing to send" in nothing.stderr
    unknown = cockpit("send", "zzzz", "hello", home=service_home)
    assert unknown.returncode == 2


async def test_send_wait_streams_the_reply_and_exits_with_the_turn(service_home: Path) -> None:
    session = new_session(service_home)
    followed = ok(cockpit("send", session, "hello", "--wait", home=service_home))
    assert followed.stdout.startswith(WELCOME)
    rows = stored_rows(service_home, session)
    assert rows[-1]["kind"] == "agent" and rows[-1]["text"].strip() in followed.stdout
    assert listed(service_home)[session] == Status.READY

    at_once = ok(cockpit("wait", session, "--until", "done", "--timeout", "10", home=service_home))
    assert at_once.stdout.strip() == f"{session} ready"


async def test_wait_until_needs_you_sees_a_question(service_home: Path) -> None:
    ok(cockpit(*HELLO, home=service_home))  # its --yes allowed that run's questions, no later one's
    (session,) = listed(service_home)
    ok(cockpit("send", session, "permission", home=service_home))
    asked = ok(
        cockpit("wait", session, "--until", "needs-you", "--timeout", "30", home=service_home)
    )
    assert asked.stdout.strip() == f"{session} waiting: {NOTES}"
    still = cockpit("wait", session, "--until", "idle", "--timeout", "1", home=service_home)
    assert still.returncode == 124 and "still waiting, not idle" in still.stderr


# -- answer ----------------------------------------------------------------------------------


async def test_answer_takes_a_number_an_id_a_name_or_a_kind(
    service_home: Path, tmp_path: Path, client: tuple[EngineAPI, Recorder]
) -> None:
    engine, recorder = client
    ends: list[str] = []

    def count_ends(event: object) -> None:
        if isinstance(event, StatusEvent) and event.turn_ended:
            ends.append(event.detail)

    engine.subscribe(count_ends)
    record = await engine.create_session("demo", tmp_path)
    session = record.id
    none = await in_thread("answer", session, "1", home=service_home)
    assert none.returncode == 2 and f"no question waits in {session}" in none.stderr

    async def answered(wanted: str, option: str, turns: int) -> None:
        """Ask the question again, answer it with `cockpit answer SESSION WANTED`: the
        agent gets `option`, and no client sees the question any more."""
        engine.send(session, "permission")
        await eventually(lambda: engine.pending_count(session) == 1, 30, "the question")
        request = engine.first_pending(session)
        assert request is not None and request.title == NOTES
        if turns == 1:
            wrong = await in_thread("answer", session, "maybe", home=service_home)
            assert wrong.returncode == 2
            assert "'maybe' is not one of the options: 1. Allow once (allow_once), " in wrong.stderr
            assert engine.pending_count(session) == 1
        ok(await in_thread("answer", session, wanted, home=service_home))
        await eventually(
            lambda: (request.id, option) in recorder.resolved, what=f"{wanted!r} -> {option}"
        )
        assert engine.pending_count(session) == 0, "the question stays for another client"
        now = await in_thread("events", "--json", "--session", session, home=service_home)
        assert [line for line in ok(now).stdout.splitlines() if '"question"' in line] == []
        await eventually(lambda: len(ends) == turns, 30, "the end of the turn")

    # `allow-always` is left out: it would allow the next questions without asking
    await answered("3", "reject", 1)  # by number
    await answered("allow", "allow", 2)  # by id
    await answered("Allow once", "allow", 3)  # by name
    await answered("reject_once", "reject", 4)  # by kind
    assert ends == ["end_turn"] * 4
    decisions = [row for row in await engine.rows(session) if row.kind == "permission"]
    assert len(decisions) == 4


# -- events ----------------------------------------------------------------------------------


async def test_events_follow_a_question_to_the_end_of_its_turn_in_order(service_home: Path) -> None:
    session = new_session(service_home)
    follower = spawn_events(service_home, "--follow", "--json", "--session", session)
    everything = spawn_events(service_home, "--follow", "--json", "--frames")
    try:
        lines = Lines(follower)
        first = lines.until(lambda line: True)
        assert first == {"type": "status", "session": session, "status": Status.READY}
        all_lines = Lines(everything)
        all_lines.until(lambda line: line.get("session") == session)

        ok(cockpit("send", session, "permission", home=service_home))
        ok(cockpit("wait", session, "--until", "needs-you", home=service_home))
        now = ok(cockpit("events", "--json", home=service_home)).stdout.splitlines()
        assert json.loads(now[0]) == {"type": "status", "session": session, "status": "waiting"}
        question = json.loads(now[1])
        assert question["type"] == "question" and question["title"] == NOTES
        assert [o["optionId"] for o in question["options"]] == ["allow", "allow-always", "reject"]

        ok(cockpit("answer", session, "1", home=service_home))
        lines.until(lambda line: line["type"] == "turn_end")
        kinds = [line["type"] for line in lines.seen]
        working = kinds.index("status", 1)
        asked = kinds.index("question")
        decided = kinds.index("decision")
        ended = kinds.index("turn_end")
        assert working < asked < decided < ended, lines.seen
        assert lines.seen[working]["status"] == Status.WORKING
        assert lines.seen[asked]["request"] == question["request"]
        assert lines.seen[decided] == {
            "type": "decision",
            "session": session,
            "request": question["request"],
            "option": "allow",
        }
        assert lines.seen[ended] == {
            "type": "turn_end",
            "session": session,
            "status": Status.READY,
            "stop_reason": "end_turn",
        }
        assert all(line.get("session") in (session, None) for line in lines.seen)
        assert "frame" not in kinds

        all_lines.until(lambda line: line["type"] == "turn_end")
        frames = [line for line in all_lines.seen if line["type"] == "frame"]
        assert any(f["kind"] == "agent" and f["session"] == session for f in frames)
        assert any(f["kind"] == "permission" for f in frames)
        everything_kinds = [line["type"] for line in all_lines.seen]
        assert everything_kinds.index("question") < everything_kinds.index("decision")

        assert ended_cleanly(follower, signal.SIGINT) == (0, "")
        assert ended_cleanly(everything, signal.SIGTERM) == (0, "")
    finally:
        for process in (follower, everything):
            if process.poll() is None:
                process.kill()
                process.wait()


async def test_events_follow_ends_when_the_service_goes_away(service_home: Path) -> None:
    ok(cockpit(*HELLO, home=service_home))
    follower = spawn_events(service_home, "--follow", "--json")
    try:
        Lines(follower).until(lambda line: line["type"] == "status")
        ok(cockpit("service", "stop", "--yes", home=service_home))
        try:
            follower.wait(20)
        except subprocess.TimeoutExpired:
            pytest.fail("`cockpit events --follow` hangs after the service stopped")
        assert follower.stderr is not None
        error = follower.stderr.read().decode()
        assert follower.returncode == 6, error
        assert error.strip() == (
            "cockpit: the Cockpit service was stopped by `cockpit service stop`; what it "
            "stored is kept (`cockpit show` reads it)"
        )
        assert service_pid(service_home) is None, "the follower started a new service"
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_events_tells_a_resync_as_a_line() -> None:
    """A reader that fell behind learns that events were dropped (it may read the state
    again with `cockpit events --json`)."""
    assert event_json(ResyncEvent("fell behind")) == {
        "type": "resync",
        "session": None,
        "reason": "fell behind",
    }
