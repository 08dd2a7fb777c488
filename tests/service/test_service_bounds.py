"""What a client can make the service do, and what it cannot: a draft past its bound is not
kept, a request past its bound is refused (by the client before it sends, by the service
if it comes anyway) and the connection goes on; garbage on the socket costs the log one
short line per client; the service serves a bounded number of clients and says so to the
next; and `status` answers in a moment whatever the others do (many attaching at once
with a big state, one that floods it with calls and never reads).

Real sockets and real services throughout: a `cockpit service` process where its log, its
memory or its own loop is what is measured; the same service in this process where the
test needs to lower its cap."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cockpit import protocol
from cockpit.bounds import DRAFT_BYTES, RequestTooLarge, encoded
from cockpit.engine.core import Engine
from cockpit.paths import service_socket
from cockpit.remote import launch
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import STREAM_LIMIT, connect_or_start, query_service
from cockpit.remote.link import ServiceFull
from cockpit.service import daemon, server
from tests.bench.service_procs import ServiceProcess, rss_mb, running_service
from tests.support.service_helpers import cockpit, services_stopped
from tests.support.waiting import eventually

# -- a service of the test's --------------------------------------------------------------------


@pytest.fixture
async def service(service_home: Path) -> AsyncIterator[ServiceProcess]:
    """`cockpit service` in a process of its own on the test's store, stopped after it."""
    with services_stopped(service_home):
        async with running_service(service_home) as running:
            yield running


@contextlib.asynccontextmanager
async def attached(home: Path, name: str = "test") -> AsyncIterator[RemoteEngine]:
    client = await RemoteEngine.attach(lambda: connect_or_start(home, start=False), name=name)
    try:
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def served_here(home: Path, max_clients: int) -> AsyncIterator[asyncio.Future[int]]:
    """The store's service running in this process (`daemon.serve`, its lock, its socket),
    serving at most `max_clients`; the future is its exit code."""
    running = asyncio.ensure_future(daemon.serve(home, idle=600, max_clients=max_clients))
    await eventually(lambda: service_socket(home).exists() or running.done(), 20, "it to listen")
    try:
        yield running
    finally:
        if not running.done():
            await query_service(home, protocol.STOP, {"restart": True}, answer_within=30)
        await asyncio.wait_for(running, 30)


async def said_by_the_service(caplog: pytest.LogCaptureFixture, words: str) -> None:
    """Wait until the service running in this process logs `words` (what it did, said)."""
    await eventually(lambda: words in caplog.text, 30, f"the service to log {words!r}")


async def raw_connection(home: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_unix_connection(str(service_socket(home)), limit=STREAM_LIMIT)


async def answer_to(reader: asyncio.StreamReader, request_id: int) -> dict[str, Any]:
    """The answer to request `request_id`, skipping what comes before it."""
    answer: dict[str, Any] = (await answers_to(reader, request_id))[request_id]
    return answer


async def answers_to(reader: asyncio.StreamReader, *request_ids: int) -> dict[int, Any]:
    """The answers to these requests, in whatever order they come (each runs on its own)."""
    found: dict[int, Any] = {}
    async with asyncio.timeout(30):
        while len(found) < len(request_ids):
            message = json.loads(await reader.readline())
            if message.get("id") in request_ids:
                found[message["id"]] = message
    return found


def hello(request_id: int = 0) -> bytes:
    params = {"protocol": protocol.PROTOCOL_VERSION, "client": "raw"}
    return encoded({"jsonrpc": "2.0", "id": request_id, "method": protocol.HELLO, "params": params})


def call(request_id: int, name: str, **args: Any) -> bytes:
    params = {"name": name, "args": args}
    return encoded({"jsonrpc": "2.0", "id": request_id, "method": protocol.CALL, "params": params})


async def status_seconds(home: Path) -> float:
    """How long `cockpit service status`'s question takes to be answered."""
    started = time.perf_counter()
    answer = await query_service(home, protocol.STATUS, answer_within=30)
    assert answer is not None and "clients" in answer
    return time.perf_counter() - started


def status_command_seconds(home: Path) -> float:
    """How long `cockpit service status` takes, run from another process (this one's loop
    is busy with the clients it runs)."""
    started = time.perf_counter()
    result = cockpit("service", "status", home=home)
    assert result.returncode == 0, result.stderr
    return time.perf_counter() - started


def lines_of(path: Path) -> list[str]:
    return path.read_text(errors="replace").splitlines() if path.exists() else []


# -- drafts and requests past their bound ------------------------------------------------------


@pytest.mark.parametrize("through", ["service", "local"])
async def test_a_draft_past_its_bound_is_not_kept_and_the_one_kept_stays(
    service_home: Path, tmp_path: Path, through: str
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        if through == "service":
            stack.enter_context(services_stopped(service_home))
            await stack.enter_async_context(running_service(service_home))
            client = await stack.enter_async_context(attached(service_home))
            engine: Any = client

            async def save(session: str, text: str) -> None:
                await client._call("save_draft", session_id=session, text=text)  # answered
        else:
            engine = await Engine.open(service_home)
            stack.push_async_callback(engine.close)

            async def save(session: str, text: str) -> None:
                engine.save_draft(session, text)

        record = await engine.create_session("demo", str(tmp_path))
        await save(record.id, "é" * (DRAFT_BYTES // 2))  # at the bound: kept
        assert (await engine.session(record.id)).draft == "é" * (DRAFT_BYTES // 2)
        with pytest.raises(ValueError, match="over the 1,024 KB Cockpit keeps"):
            await save(record.id, "x" * (DRAFT_BYTES + 1))
        assert (await engine.session(record.id)).draft == "é" * (DRAFT_BYTES // 2)
        await save(record.id, "short again")
        assert (await engine.session(record.id)).draft == "short again"


async def test_a_request_past_the_bound_is_not_sent_and_one_under_it_is(
    service: ServiceProcess, tmp_path: Path
) -> None:
    """A 20 MB prompt: the client refuses it with a clear message and sends nothing (the
    service's log shows the client's one connection and no problem). A 3 MB prompt, past a
    draft's bound but under a request's, is sent and stored whole."""
    async with attached(service.home) as client:
        record = await client.create_session("demo", str(tmp_path))
        with pytest.raises(RequestTooLarge, match=r"20\.0 MB, over the 16\.0 MB .*not sent"):
            await client.prompt(record.id, "x" * (20 * 1024 * 1024))
        assert await client.rows(record.id) == []
        big = "y" * (3 * 1024 * 1024)
        await client.prompt(record.id, big)
        assert [row.text for row in await client.rows(record.id) if row.kind == "user"] == [big]
    assert "line(s) of it were no usable message" not in service.log_tail(100)


async def test_cockpit_send_refuses_a_prompt_past_the_bound_and_sends_nothing(
    service: ServiceProcess, tmp_path: Path
) -> None:
    async with attached(service.home) as client:
        record = await client.create_session("demo", str(tmp_path))
        big = tmp_path / "big.md"
        big.write_text("w" * (20 * 1024 * 1024))
        sent = await asyncio.to_thread(
            cockpit, "send", record.id, "--file", str(big), home=service.home
        )
        assert sent.returncode == 2
        assert sent.stderr.startswith(
            "cockpit: This prompt is 20.0 MB, over the 16.0 MB a request to Cockpit may take: "
            "nothing was sent."
        )
        assert await client.rows(record.id) == []


async def test_a_request_past_the_bound_sent_anyway_is_refused_and_the_connection_goes_on(
    service: ServiceProcess,
) -> None:
    """A client that does not check sends a 17 MB request: the service reads it to its end
    without keeping it, answers its id with an error that says why, and answers the next
    request on the same connection."""
    reader, writer = await raw_connection(service.home)
    try:
        writer.write(hello(1))
        assert "result" in await answer_to(reader, 1)
        writer.write(call(2, "save_draft", session_id="s", text="z" * (17 * 1024 * 1024)))
        writer.write(call(3, "sessions"))
        answers = await answers_to(reader, 2, 3)
        assert answers[2]["error"]["message"].endswith(
            "over the 16.0 MB the Cockpit service takes in one request: it was not read"
        )
        assert answers[2]["error"]["data"]["type"] == "ValueError"
        assert answers[3]["result"] == {"result": []}
    finally:
        writer.close()


# -- the log ---------------------------------------------------------------------------------------

GARBAGE = [
    b"SECRET-PROMPT not json at all",
    b"42",
    b'["SECRET-PROMPT"]',
    b'{"id": {"SECRET": 1}, "method": "cockpit/call"}',
    b'{"method": 5, "params": "SECRET-PROMPT"}',
    b'{"jsonrpc": "2.0"}',
    b"[" * 2000 + b"]" * 2000,
    b'{"jsonrpc":"2.0","method":"cockpit/show","params":' + b"[" * 100 + b"]" * 100 + b"}",
]
"""Lines no client may hurt the service with: none is a message it can use."""


async def test_ten_thousand_malformed_lines_cost_the_log_a_line(service: ServiceProcess) -> None:
    """Ten thousand garbage lines, a request past the bound and a failing call from one
    client: its connection goes on (the next request is answered), the service's log says
    so in one short line and the client's leaving in another, with nothing of what the
    lines held and no traceback; Cockpit's log gets nothing."""
    home = service.home
    service_log = home / "service-test.log"  # the service's output, here
    cockpit_log = home / "logs" / "cockpit.log"
    attaching = len(lines_of(service_log))
    reader, writer = await raw_connection(home)
    await eventually(
        lambda: any(" attached (" in line for line in lines_of(service_log)[attaching:]),
        30,
        "the service to take the connection",
    )
    try:
        writer.write(hello(1))
        assert "result" in await answer_to(reader, 1)
        # Ours is the only client left once the newest count says one is attached (the
        # fixture's own query may leave after ours came): what comes after is ours alone.
        await eventually(
            lambda: [line for line in lines_of(service_log) if " attached)" in line][-1].endswith(
                "(1 attached)"
            ),
            30,
            "the other clients to leave",
        )
        before = (lines_of(service_log), lines_of(cockpit_log))
        for number in range(10_000):
            writer.write(GARBAGE[number % len(GARBAGE)] + b"\n")
            if number % 1000 == 0:
                await writer.drain()
        writer.write(call(2, "rename", session_id="SECRET-PROMPT", title="SECRET-PROMPT"))
        writer.write(call(3, "no_such_call", text="SECRET-PROMPT"))
        writer.write(call(4, "sessions"))
        await writer.drain()
        answers = await answers_to(reader, 2, 3, 4)
        assert "error" in answers[2] and "error" in answers[3]
        assert answers[4]["result"] == {"result": []}
    finally:
        writer.close()
    await eventually(
        lambda: any("left" in line for line in lines_of(service_log)[len(before[0]) :])
    )
    added = lines_of(service_log)[len(before[0]) :]
    assert len(added) <= 3, added
    assert any("no usable message" in line and "10,000" in line for line in added), added
    text = "\n".join(added)
    assert "SECRET" not in text and "Traceback" not in text
    assert lines_of(cockpit_log)[len(before[1]) :] == []


# -- the cap on clients ----------------------------------------------------------------------------


async def test_past_the_cap_a_client_is_refused_in_words_and_status_and_stop_still_work(
    service_home: Path,
) -> None:
    """A service that serves two clients: a third is refused with a line it prints (the
    command line exits 6 with it), and `status` and `stop` still work. Once one leaves,
    the next is served."""
    async with served_here(service_home, max_clients=2) as running:
        async with attached(service_home, "first"), attached(service_home, "second"):
            with pytest.raises(ServiceFull, match="has 2 clients attached, as many as it serves"):
                await RemoteEngine.attach(lambda: connect_or_start(service_home, start=False))
            refused = await asyncio.to_thread(cockpit, "events", "--json", home=service_home)
            assert refused.returncode == 6
            assert refused.stderr.strip() == (
                "cockpit: the Cockpit service has 2 clients attached, as many as it serves at "
                "once: close one (a `cockpit` screen, a `cockpit events --follow`...) and try "
                "again"
            )
            status = await asyncio.to_thread(cockpit, "service", "status", home=service_home)
            assert status.returncode == 0 and "2 client(s) attached" in status.stdout
        async with attached(service_home, "third") as third:  # room again
            assert await third.sessions() == []
            async with attached(service_home, "fourth"):
                stopped = await asyncio.to_thread(
                    cockpit, "service", "stop", "--yes", home=service_home
                )
                assert stopped.returncode == 0, stopped.stderr
                assert await asyncio.wait_for(running, 30) == 0


async def test_a_full_service_turns_away_the_overflow_and_status_gets_in(
    service_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Past the cap and the connections read over it, a connection is told why and closed
    unread: a client says the same line; `status` asks again until it gets in (here, once
    the silent connection over the cap has had its moment)."""
    monkeypatch.setattr(server, "OVER_THE_CAP", 1)
    async with served_here(service_home, max_clients=1), attached(service_home, "only"):
        _reader, silent = await raw_connection(service_home)  # over the cap, and says nothing
        try:
            await said_by_the_service(caplog, "more are refused")  # it took the connection
            with pytest.raises(ServiceFull, match="has 1 clients attached"):
                await RemoteEngine.attach(lambda: connect_or_start(service_home, start=False))
            assert await status_seconds(service_home) < server.OVER_THE_CAP_GRACE + 3
        finally:
            silent.close()


async def test_a_connection_that_never_says_hello_does_not_hold_a_place(
    service_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A connection that says nothing holds the one place of a service that serves one
    client only for a moment: then it is let go, and a client that says hello is served."""
    monkeypatch.setattr(server, "HELLO_GRACE", 1.0)
    async with served_here(service_home, max_clients=1):
        caplog.set_level(logging.INFO, "cockpit.service")
        _reader, silent = await raw_connection(service_home)
        try:
            await said_by_the_service(caplog, " attached (1 attached)")
            with pytest.raises(ServiceFull):
                await RemoteEngine.attach(lambda: connect_or_start(service_home, start=False))
            await said_by_the_service(caplog, " left (0 attached)")  # let go, unheard
            async with attached(service_home, "served") as client:
                assert await client.sessions() == []
        finally:
            silent.close()


async def test_a_full_queue_of_connections_is_waited_out_not_taken_for_another_user(
    service_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listener whose queue of connections is full refuses a connection with EAGAIN, and
    asyncio took the socket for connected: its peer's uid read as -1, and `status` said the
    socket was another user's. Now the client waits for room; when there is none in time,
    it says the service takes no more connections."""
    monkeypatch.setattr(launch, "QUEUE_WAIT", 0.5)
    path = service_socket(service_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    queued = []
    try:
        while True:  # fill the queue: nothing takes from it
            waiting = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            waiting.setblocking(False)
            queued.append(waiting)
            try:
                waiting.connect(str(path))
            except BlockingIOError:
                break
        with pytest.raises(launch.ServiceBusy, match="takes no more connections"):
            await query_service(service_home, protocol.STATUS)
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, lambda: listener.accept()[0].close())  # room, in a moment
        _reader, writer = await launch.open_socket(service_home)
        writer.close()
    finally:
        for waiting in queued:
            waiting.close()
        listener.close()


@pytest.mark.real_spawn  # its memory is read by its pid: a fresh interpreter's
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_five_thousand_connections_at_once_cost_a_bounded_memory_given_back(
    service: ServiceProcess,
) -> None:
    """5,000 connections, each saying hello and staying: the service serves its cap and
    turns the rest away, its memory grows by a few MB (all of them held took it from 45
    to 150 MB), and once they close every client is let go and its descriptors closed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 6000:
        pytest.skip(f"needs 6,000 open files, {hard} allowed")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 6000), hard))
    home, pid = service.home, service.pid
    descriptors = len(os.listdir(f"/proc/{pid}/fd"))
    before = rss_mb(pid)
    connections: list[asyncio.StreamWriter] = []
    try:

        async def connect() -> None:
            with contextlib.suppress(OSError):
                _reader, writer = await raw_connection(home)
                connections.append(writer)
                writer.write(hello())

        for _ in range(25):  # in waves: the kernel's queue of connections is short
            await asyncio.gather(*(connect() for _ in range(200)))
        assert len(connections) > 4000
        assert await status_seconds(home) < 5
        peak = rss_mb(pid)
        # Holding all of them costs over 100 MB. Turning them away costs a few, more on a
        # loaded machine, where more wait at once to be turned away (33 MB seen at load 13).
        assert peak - before < 50, f"{before:.0f} MB before, {peak:.0f} MB with the connections"
    finally:
        for writer in connections:
            writer.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    async def let_go() -> bool:
        answer = await query_service(home, protocol.STATUS)
        return answer is not None and answer["clients"] == 0

    await eventually(let_go, 30, "every client to be let go")
    await eventually(lambda: len(os.listdir(f"/proc/{pid}/fd")) <= descriptors + 2, 10)
    assert rss_mb(pid) - before < 30


# -- status and stop are always answered -------------------------------------------------------

ATTACHING = 120
"""Clients that attach at once and list the sessions, each reading every draft."""


async def test_status_answers_at_once_while_many_clients_attach_to_a_big_state(
    service: ServiceProcess, tmp_path: Path
) -> None:
    """Three sessions with a draft at the bound each (3 MB a listing), and a hundred and
    twenty clients attaching at once, each listing the sessions: `status` answers in a
    moment all along, and so do the clients served (the rest are refused, in words)."""
    home = service.home
    async with attached(home, "driver") as driver:
        for number in range(3):
            record = await driver.create_session("demo", str(tmp_path), title=f"big {number}")
            await driver._call("save_draft", session_id=record.id, text="d" * DRAFT_BYTES)

    async def one() -> str:
        try:
            async with attached(home, "crowd") as client:
                assert all(len(record.draft) == DRAFT_BYTES for record in await client.sessions())
        except ServiceFull:
            return "refused"
        return "served"

    crowd = [asyncio.ensure_future(one()) for _ in range(ATTACHING)]
    waits = []
    while not all(task.done() for task in crowd):
        waits.append(await asyncio.to_thread(status_command_seconds, home))
        await asyncio.sleep(0.2)
    outcomes = await asyncio.gather(*crowd)
    assert outcomes.count("served") >= server.MAX_CLIENTS // 2, outcomes
    assert max(waits) < 2.5, f"status took up to {max(waits):.1f} s ({len(waits)} asked)"


async def test_status_answers_at_once_while_a_client_floods_calls_and_never_reads(
    service: ServiceProcess,
) -> None:
    """One client writes twenty thousand calls at once and never reads an answer: it fills
    its own socket, `status` (another client) is answered in a moment, and `stop` stops
    the service."""
    home = service.home
    reader, writer = await raw_connection(home)
    try:
        writer.write(hello(0))
        assert "result" in await answer_to(reader, 0)
        flood = b"".join(call(number, "sessions") for number in range(1, 20_001))
        writer.write(flood)
        await asyncio.sleep(1)  # the service reads what it takes of the flood
        waits = [await status_seconds(home) for _ in range(5)]
        assert max(waits) < 2, waits
        stopped = await asyncio.to_thread(cockpit, "service", "stop", "--yes", home=home)
        assert stopped.returncode == 0, stopped.stderr
        process = service.process
        assert process is not None
        await eventually(lambda: process.poll() is not None, 10, "the service to end")
    finally:
        writer.close()


async def test_a_client_that_leaves_before_its_answers_costs_the_log_nothing(
    service: ServiceProcess,
) -> None:
    """Requests whose client went away before they were answered: their answers are
    dropped (no one is left to tell), with no traceback in either log."""
    home = service.home
    logs = (home / "service-test.log", home / "logs" / "cockpit.log")
    before = [lines_of(path) for path in logs]
    for _ in range(20):
        _reader, writer = await raw_connection(home)
        writer.write(hello(0) + b"".join(call(number, "sessions") for number in range(1, 300)))
        await writer.drain()
        await asyncio.sleep(0.01)
        writer.transport.abort()  # gone, unread answers and all
    assert await status_seconds(home) < 5

    def left() -> int:  # the service logs each client's leaving once it has let it go
        return sum(" left (" in line for line in lines_of(logs[0])[len(before[0]) :])

    await eventually(lambda: left() >= 21, 30, "the service to let the 20 clients go")
    added = [lines_of(path)[len(seen) :] for path, seen in zip(logs, before, strict=True)]
    assert not any("Traceback" in line or "ERROR" in line for lines in added for line in lines), (
        added
    )
    assert added[1] == [], added[1]


async def test_status_made_from_memory_shows_a_session_renamed_since_it_started(
    service: ServiceProcess, tmp_path: Path
) -> None:
    async with attached(service.home) as client:
        record = await client.create_session("demo", str(tmp_path), title="before")
        await client.start(record.id)
        await client.rename(record.id, "after")
        status = await query_service(service.home, protocol.STATUS)
        assert status is not None
        assert [(s["id"], s["title"]) for s in status["sessions"]] == [(record.id, "after")]


async def test_status_made_from_memory_shows_a_session_named_after_its_first_prompt(
    service: ServiceProcess, tmp_path: Path
) -> None:
    """A session the user did not name takes its first prompt's line as its title: status
    shows it too (it showed "(untitled)" while the rail showed the title)."""
    async with attached(service.home) as client:
        record = await client.create_session("demo", str(tmp_path))
        assert await client.prompt(record.id, "table of the week") == "end_turn"
        status = await query_service(service.home, protocol.STATUS)
        assert status is not None
        assert [(s["id"], s["title"]) for s in status["sessions"]] == [
            (record.id, "table of the week")
        ]
