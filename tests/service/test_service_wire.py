"""The service's wire under strain, with a real service process, real sockets and real
demo agents: a connection cut every 100 ms while a 50 KB reply streams loses and doubles
nothing (the view a client keeps, as the UI keeps it, ends equal to the stored rows); a
client gets frames only of the sessions it shows, and every session's status; a client
stopped with SIGSTOP holds up neither the service nor another client, costs the service
a bounded outbox, and after SIGCONT reads again and ends equal to the rows. And the
outbox itself, over a real socket pair: frames queued while the client is busy go out as
one event, in order, each run of them joined into one frame; frames streamed one by one
are gathered before they go; and past its bound the outbox turns into one resync."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from acp.connection import Connection, StreamDirection, StreamEvent

from cockpit import protocol
from cockpit.api import AttentionEvent, EngineEvent, FramesEvent, Row, Status, StatusEvent
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine
from cockpit.remote.launch import Streams
from cockpit.remote.link import Connector
from cockpit.service.link import OUTBOX_BYTES, ClientLink
from cockpit.service.server import Service
from store.model import Frame
from store.store import Store
from tests.bench.service_client import StoppableClient
from tests.bench.service_procs import Relay, ServiceProcess, rss_mb, running_service
from tests.bench.service_view import ShownView, difference, expected
from tests.support.service_helpers import services_stopped
from tests.support.waiting import eventually

CUT_EVERY = 0.1
"""Seconds between two cuts of the relay while a reply streams."""


@pytest.fixture
async def service(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ServiceProcess]:
    """A service on the test's own store, stopped after the test whatever happens (and
    any process of the store left then, an agent or a stopped client, killed)."""
    monkeypatch.delenv("COCKPIT_LOCAL")
    with services_stopped(isolated_home):
        async with running_service(isolated_home) as running:
            yield running


@pytest.fixture
def short_folder() -> Iterator[Path]:
    """A folder with a short path, for a socket (a Unix socket's path is short)."""
    folder = Path(tempfile.mkdtemp(prefix="relay-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.asynccontextmanager
async def attached(service: ServiceProcess, name: str) -> AsyncIterator[RemoteEngine]:
    engine = await RemoteEngine.attach(service.connector(), name=name)
    try:
        yield engine
    finally:
        await engine.close()


async def cut_while(relay: Relay, turn: asyncio.Future[Any], check: Any = None) -> None:
    """Cut every connection of `relay` every CUT_EVERY seconds until `turn` ends; before
    each cut, `check()` (what the view holds must be sound at every moment)."""
    while not turn.done():
        await asyncio.wait([turn], timeout=CUT_EVERY)
        if turn.done():
            return
        if check is not None:
            check()
        relay.cut()


def sound_prefix(shown: ShownView, texts: list[list[tuple[str, str, str]]]) -> None:
    """Record what the view holds now; it must never hold a bubble marked stale (frames
    came whose head it never got: something was lost)."""
    assert not any(bubble.stale for bubble in shown.view), "a gap in the frames"
    texts.append(shown.shown())


MIN_CUTS = 10
"""Cuts a test makes at least: the 50 KB reply streams in under a second, so it streams
again, in a new session each time, until the relay has cut this often."""

MAX_REPLIES = 15


async def test_a_reply_cut_every_100_ms_reaches_the_view_whole(
    service: ServiceProcess, short_folder: Path, tmp_path: Path
) -> None:
    async with (
        Relay(service.socket, short_folder / "relay.sock") as relay,
        attached(service, "driver") as driver,
    ):
        client = await RemoteEngine.attach(relay.connect, name="cut-client")
        try:
            replies = 0
            while relay.cuts < MIN_CUTS and replies < MAX_REPLIES:
                replies += 1
                await one_reply_cut_every_100_ms(driver, client, relay, tmp_path)
            assert relay.cuts >= MIN_CUTS, f"{relay.cuts} cuts in {replies} replies"
            assert client.links_lost >= 1, "no cut dropped the client while attached"
        finally:
            await client.close()


async def one_reply_cut_every_100_ms(
    driver: RemoteEngine, client: RemoteEngine, relay: Relay, folder: Path
) -> None:
    """A new session streams the bench reply, shown by `client` through `relay`, which is
    cut every 100 ms; at every cut the view must be sound, and at the end equal the rows."""
    record = await driver.create_session("demo", str(folder))
    await driver.start(record.id)
    client.show(record.id)
    shown = ShownView(client, record.id)
    await eventually(lambda: shown.reads >= 1, 30, "the client to read the session it shows")
    moments: list[list[tuple[str, str, str]]] = []
    lost = client.links_lost
    turn = asyncio.ensure_future(driver.prompt(record.id, "bench"))
    await cut_while(relay, turn, lambda: sound_prefix(shown, moments))
    assert await turn == "end_turn"
    rows = await driver.rows(record.id)
    assert [row.kind for row in rows] == ["user", "agent"]
    try:
        await eventually(
            lambda: (
                client.status(record.id) == Status.READY
                and shown.resyncs >= client.links_lost - lost  # each cut told, then read
                and shown.idle
            ),
            30,
            "the client to take every event after the last cut",
        )
    except AssertionError as error:
        story = shown.told()
        raise AssertionError(f"{error}; status {client.status(record.id)}:\n{story}") from None
    assert difference(shown.shown(), expected(rows)) == "equal", shown.told()
    assert not any(bubble.stale for bubble in shown.view), shown.told()
    final = {key: text for key, _, text in expected(rows)}
    for moment in moments:  # at every cut, each bubble a prefix of its final text
        for key, _, text in moment:
            assert final[key].startswith(text), f"{key} held text that is not its own"
    await shown.close()


async def test_the_tui_on_a_connection_cut_every_100_ms_shows_the_rows(
    service: ServiceProcess, short_folder: Path, tmp_path: Path
) -> None:
    from cockpit.ui.app import CockpitApp

    async with (
        Relay(service.socket, short_folder / "relay.sock") as relay,
        attached(service, "driver") as driver,
    ):
        client = await RemoteEngine.attach(relay.connect, name="cut-tui")
        app = CockpitApp(
            client,
            folder=tmp_path,
            blink=False,
            settings_file=tmp_path / "settings.json",
            themes_dir=tmp_path / "themes",
        )
        try:
            async with app.run_test(size=(120, 40)):
                await eventually(lambda: app.current is not None, 30, "the app to show a session")
                replies = 0
                while relay.cuts < MIN_CUTS and replies < MAX_REPLIES:
                    replies += 1
                    await one_reply_on_the_tui(app, driver, relay, tmp_path)
                assert relay.cuts >= MIN_CUTS, f"{relay.cuts} cuts in {replies} replies"
        finally:
            await client.close()


async def one_reply_on_the_tui(app: Any, driver: RemoteEngine, relay: Relay, folder: Path) -> None:
    """A new session streams the bench reply on the app's screen through `relay`, cut
    every 100 ms; the transcript view must end equal to the rows."""
    from cockpit.ui.transcript import TranscriptView

    record = await driver.create_session("demo", str(folder))
    await driver.start(record.id)
    await show_in_app(app, record.id)
    view = app.query_one(TranscriptView)
    turn = asyncio.ensure_future(driver.prompt(record.id, "bench"))
    await cut_while(relay, turn)
    assert await turn == "end_turn"
    rows = expected(await driver.rows(record.id))
    assert [kind for _, kind, _ in rows] == ["user", "agent"], "a row besides the turn's"
    try:
        await eventually(
            lambda: on_screen(view) == rows, 30, "the TUI's transcript to equal the rows"
        )
    except AssertionError as error:
        raise AssertionError(f"{error}: {difference(on_screen(view), rows)}") from None
    assert not any(bubble.stale for bubble in view.model)


def on_screen(view: Any) -> list[tuple[str, str, str]]:
    """What a TranscriptView holds."""
    return [(bubble.key, bubble.kind, bubble.text) for bubble in view.model]


async def show_in_app(app: Any, session: str) -> None:
    """Choose `session` on the app's rail as a user does, and wait until its transcript
    is read."""
    from cockpit.ui.transcript import TranscriptView

    await eventually(lambda: session in app.records, 30, "the app to learn of the session")
    app.select_session(session)
    view = app.query_one(TranscriptView)
    await eventually(
        lambda: view.session == session and view._busy is None, 30, "the session on screen"
    )


async def test_a_client_gets_frames_only_of_what_it_shows_and_every_status(
    service: ServiceProcess, tmp_path: Path
) -> None:
    async with attached(service, "driver") as driver, attached(service, "viewer") as viewer:
        shown_record = await driver.create_session("demo", str(tmp_path), title="shown")
        other_record = await driver.create_session("demo", str(tmp_path), title="other")
        await asyncio.gather(driver.start(shown_record.id), driver.start(other_record.id))
        viewer.show(shown_record.id)
        shown = ShownView(viewer, shown_record.id)
        events: list[EngineEvent] = []
        viewer.subscribe(events.append)
        await viewer.page(shown_record.id)  # the show has reached the service
        reasons = await asyncio.gather(
            driver.prompt(shown_record.id, "bench"), driver.prompt(other_record.id, "bench")
        )
        assert list(reasons) == ["end_turn", "end_turn"]
        await eventually(
            lambda: (
                viewer.status(other_record.id) == Status.READY
                and viewer.status(shown_record.id) == Status.READY
                and shown.idle
            ),
            30,
            "both turns to end on the viewer",
        )
        assert shown.matches(await driver.rows(shown_record.id))
        assert shown.frames_events[other_record.id] == 0, "frames of a session not shown"
        assert shown.frames_events[shown_record.id] > 0
        statuses = [
            e.status for e in events if isinstance(e, StatusEvent) and e.session == other_record.id
        ]
        assert Status.WORKING in statuses and statuses[-1] == Status.READY
        assert any(
            isinstance(e, AttentionEvent) and e.session == other_record.id and e.unread
            for e in events
        )
        assert viewer.unread(other_record.id)
        await shown.close()


def described_rows(rows: Sequence[Row]) -> list[list[Any]]:
    """Rows as the stoppable client describes its view (key, kind, length, digest)."""
    return [
        [r.key, r.kind, len(r.text), hashlib.sha256(r.text.encode()).hexdigest()[:16]] for r in rows
    ]


GROWTH_ALLOWED = 3
"""How many times its outbox's bound the service may grow by for a stopped client (the
outbox's weights are estimates; the allocator keeps some of what it freed)."""

SLOW_REPLY = 600_000
"""The reply the stopped client's session streams: about 150,000 frames, more than its
outbox may hold once the socket's buffers are full. Gathered as the outbox gathers them
(a hundred events a second), 200,000 characters fit in those buffers (about 200 KB of
the kernel's and 64 KB of asyncio's) nearly whole, and a stopped client then never fell
behind at all."""


@pytest.mark.real_spawn  # the service's memory is read by its pid: a fresh interpreter's
async def test_a_stopped_client_holds_up_no_one_and_reads_again_after(
    service: ServiceProcess, tmp_path: Path
) -> None:
    async with attached(service, "driver") as driver, attached(service, "other") as other:
        slow = await driver.create_session("demo", str(tmp_path), title="slow client's")
        fast = await driver.create_session("demo", str(tmp_path), title="other client's")
        await asyncio.gather(driver.start(slow.id), driver.start(fast.id))
        other.show(fast.id)
        other_view = ShownView(other, fast.id)
        stoppable = StoppableClient(service.home)
        try:
            assert (await stoppable.ask(f"show {slow.id}")) == {"shown": slow.id}

            async def both_streams() -> float:
                """Both replies at once; seconds the other client's took."""
                started = time.perf_counter()
                fast_turn = asyncio.ensure_future(driver.prompt(fast.id, "bench"))
                slow_turn = asyncio.ensure_future(driver.prompt(slow.id, f"bench {SLOW_REPLY}"))
                assert await fast_turn == "end_turn"
                took = time.perf_counter() - started
                assert await slow_turn == "end_turn"
                return took

            reading = await both_streams()  # the baseline: every client reads
            rss_before = rss_mb(service.pid)
            stoppable.signal(signal.SIGSTOP)
            peak = 0.0

            async def sample() -> None:
                nonlocal peak
                while True:
                    peak = max(peak, rss_mb(service.pid))
                    await asyncio.sleep(0.05)

            sampler = asyncio.ensure_future(sample())
            try:
                stopped = await both_streams()
                if stopped >= 2 * reading + 2:  # the stopped client, or a busy machine's moment:
                    stopped = min(stopped, await both_streams())  # the second says which
            finally:
                sampler.cancel()
            fast_rows = await driver.rows(fast.id)
            await eventually(
                lambda: other_view.idle and other_view.matches(fast_rows),
                30,
                "the other client's view to equal its rows while the first one is stopped",
            )
            assert stopped < 2 * reading + 2, (
                f"the other client's reply took {stopped:.1f} s with a client stopped, "
                f"{reading:.1f} s with none"
            )
            bound = GROWTH_ALLOWED * OUTBOX_BYTES / 2**20
            assert peak - rss_before < bound, (
                f"the service grew by {peak - rss_before:.1f} MB for a stopped client"
            )
            stoppable.signal(signal.SIGCONT)
            slow_rows = described_rows((await driver.page(slow.id)).rows)  # what it shows

            state: dict[str, Any] = {}

            async def caught_up() -> bool:
                state.update(await stoppable.ask("check"))
                return bool(
                    state["idle"] and state["bubbles"] == slow_rows and state["resyncs"] >= 1
                )

            try:
                await eventually(caught_up, 60, "the stopped client to read again after SIGCONT")
            except AssertionError as error:
                message = f"{error}: it holds {state}, the rows are {slow_rows}"
                raise AssertionError(message) from None
            assert not state["stale"]
            await stoppable.ask("quit")
        finally:
            stoppable.close()
        await other_view.close()


# -- the outbox, over a real socket pair -------------------------------------------------------


async def _no_requests(method: str, params: Any, is_notification: bool) -> None:
    return None


@contextlib.asynccontextmanager
async def link_and_reader() -> AsyncIterator[tuple[ClientLink, asyncio.StreamReader]]:
    """A client link writing to one end of a socket pair; the other end, to read what a
    client would."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours, limit=2**26)
    client_reader, client_writer = await asyncio.open_connection(sock=theirs, limit=2**26)
    link = ClientLink(1, lambda link: Connection(_no_requests, writer, reader, listening=False))
    try:
        yield link, client_reader
    finally:
        await link.close()
        writer.close()
        client_writer.close()


async def read_messages(reader: asyncio.StreamReader, count: int) -> list[dict[str, Any]]:
    async with asyncio.timeout(10):
        return [json.loads(await reader.readline()) for _ in range(count)]


def frames_of(session: str, start: int, count: int) -> FramesEvent:
    """`count` 4-character frames of one reply, from character `start * 4` on."""
    return FramesEvent(
        session,
        tuple(
            Frame(session, "agent:1:@2", 2, "agent", 1, "abcd", True, (start + i + 1) * 4)
            for i in range(count)
        ),
    )


def received(message: dict[str, Any]) -> Any:
    assert message["method"] == protocol.EVENT
    return protocol.decode(message["params"]["event"])


async def test_frames_queued_while_the_client_is_busy_go_as_one_event_in_order() -> None:
    async with link_and_reader() as (link, reader):
        for number in range(5_000):  # no await: the link sends nothing meanwhile
            link.post_frames(frames_of("one", number, 1))
        link.post_frames(frames_of("two", 0, 3))
        link.post_frames(frames_of("one", 5_000, 2))
        events = [received(m) for m in await read_messages(reader, 3)]
        # Each event's frames continue one another: each crosses as one frame.
        assert [(e.session, [(f.part, f.n) for f in e.frames]) for e in events] == [
            ("one", [("abcd" * 5_000, 20_000)]),
            ("two", [("abcd" * 3, 12)]),
            ("one", [("abcd" * 2, 20_008)]),
        ]
        await link.drained()
        assert link.queued_bytes == 0


async def test_frames_streamed_one_by_one_are_gathered_before_they_are_sent() -> None:
    # As an agent streams: a frame, a moment, the next. The link waits FRAME_GATHER for
    # more to join the first instead of sending each as it comes.
    async with link_and_reader() as (link, reader):
        for number in range(60):
            link.post_frames(frames_of("one", number, 1))
            await asyncio.sleep(0.001)
        messages = 0
        frames: list[Frame] = []
        async with asyncio.timeout(10):
            while not frames or frames[-1].n < 240:
                frames += received(json.loads(await reader.readline())).frames
                messages += 1
        assert "".join(f.part for f in frames) == "abcd" * 60
        assert messages <= 20, f"{messages} messages for 60 frames streamed over 60 ms"


async def test_past_its_bound_the_outbox_becomes_one_resync() -> None:
    async with link_and_reader() as (link, reader):
        number = 0
        while link.resyncs == 0:
            link.post_frames(frames_of("one", number, 100))
            assert link.queued_bytes <= OUTBOX_BYTES
            number += 100
        link.post_frames(frames_of("one", number, 100))  # dropped: the resync says read again
        (message,) = await read_messages(reader, 1)
        assert message["method"] == protocol.RESYNC
        await link.drained()
        link.post_frames(frames_of("one", number + 100, 1))  # after the resync: sent again
        (after,) = await read_messages(reader, 1)
        assert received(after).frames[0].n == 4 * (number + 101)


async def test_a_read_cancelled_as_its_client_goes_away_leaves_the_store_readable(
    store: Store,
) -> None:
    """The service cancels what a client asked when the client goes away (a cut): a read
    cut before its cursor closed left the reader on the database as it was, and the next
    session created could not be read back."""
    for _ in range(3):
        await store.create_session(agent="demo", command=["demo"], cwd="/tmp")
    for attempt in range(70):
        read = asyncio.ensure_future(store.list_sessions())
        for _ in range(attempt % 7):  # cut at every step of the read
            await asyncio.sleep(0)
        read.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await read
        record = await store.create_session(agent="demo", command=["demo"], cwd="/tmp")
        assert record.id in {r.id for r in await store.list_sessions()}


async def test_an_event_just_after_the_hello_is_not_undone_by_the_state_it_follows(
    tmp_path: Path, short_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state a client attaches with goes out in order with the events. It came in the
    hello's answer, which the client takes a few loop turns after the events behind it: an
    event the engine emitted just after the state was made (here the session read on
    another screen; under load, a turn ending) was applied, then undone by the older state,
    and the session stayed unread (or "working") for good."""
    engine = await Engine.open(tmp_path / "home")
    record = await engine.create_session("demo", tmp_path)
    await engine.add_notice(record.id, "news")
    assert engine.unread(record.id)
    hello = Service._hello

    async def then_read_elsewhere(self: Service, *args: Any) -> dict[str, Any]:
        answer = await hello(self, *args)
        engine.show(record.id, viewer="another screen")  # before the answer is written
        return answer

    monkeypatch.setattr(Service, "_hello", then_read_elsewhere)
    service = Service(engine, on_stop=lambda: None)
    path = short_folder / "s.sock"
    await service.listen(path)
    try:
        client = await RemoteEngine.attach(lambda: asyncio.open_unix_connection(str(path)))
        try:
            await client.sessions()  # answered after every event sent before it
            assert not client.unread(record.id), "the event was undone by the older state"
        finally:
            await client.close()
    finally:
        await service.close()
        await engine.close()


@contextlib.asynccontextmanager
async def first_connection_to(
    folder: Path, after_answer: Callable[[asyncio.StreamWriter], None]
) -> AsyncIterator[Connector]:
    """A connector whose first connection reaches a service that answers hello (its state
    first) and then does `after_answer` to the connection; every later one, a real
    in-process service on a store of its own."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def handle(method: str, params: Any, is_notification: bool) -> Any:
            await conn.send_notification(protocol.STATE, {})
            return {"protocol": protocol.PROTOCOL_VERSION, "client": "first"}

        def answered(event: StreamEvent) -> None:
            if event.direction == StreamDirection.OUTGOING and "result" in event.message:
                after_answer(writer)

        conn = Connection(handle, writer, reader, listening=False)
        conn.add_observer(answered)
        await conn.main_loop()

    first = await asyncio.start_unix_server(answer, str(folder / "first.sock"))
    engine = await Engine.open(folder / "home")
    service = Service(engine, on_stop=lambda: None)
    await service.listen(folder / "s.sock")
    connections = 0

    async def connect() -> Streams:
        nonlocal connections
        connections += 1
        path = folder / ("first.sock" if connections == 1 else "s.sock")
        return await asyncio.open_unix_connection(str(path))

    try:
        yield connect
    finally:
        first.close()
        await service.close()
        await engine.close()


async def test_a_connection_cut_just_after_the_hello_is_attached_again(
    short_folder: Path,
) -> None:
    """The connection ends as the client takes the hello's answer: before it counts as
    attached, so its end attached nothing again, and the client believed itself attached
    to a dead connection for good (every read failed; under load, one cut in a few
    hundred left a view short or a session "working")."""

    def cut(writer: asyncio.StreamWriter) -> None:
        writer.close()  # what is written goes first

    async with first_connection_to(short_folder, cut) as connect:
        client = await asyncio.wait_for(RemoteEngine.attach(connect, name="cut"), 20)
        try:
            assert client.service["client"] != "first", "attached to the connection cut"
            assert await asyncio.wait_for(client.sessions(), 10) == []
        finally:
            await client.close()


async def test_a_write_that_fails_holds_up_no_request_after_it(short_folder: Path) -> None:
    """The service stops reading: the client's next write fails, which ends the SDK's
    sending task for good, and a request queued behind that write waited forever, the
    connection's end included (a screen stuck reading its session). Now it fails when
    the connection ends, and is made again on the next one."""
    answered: list[asyncio.StreamWriter] = []
    async with first_connection_to(short_folder, answered.append) as connect:
        client = await asyncio.wait_for(RemoteEngine.attach(connect, name="cut"), 20)
        try:
            assert client.service["client"] == "first"
            await asyncio.sleep(0.2)  # what the client sends as it attaches is read
            answered[0].get_extra_info("socket").shutdown(socket.SHUT_RD)
            both = asyncio.gather(client.sessions(), client.sessions())  # queued together
            assert list(await asyncio.wait_for(both, 10)) == [[], []]
            assert client.service["client"] != "first"
        finally:
            await client.close()


async def test_a_client_that_comes_as_the_service_stops_attaches_to_the_next(
    tmp_path: Path, short_folder: Path
) -> None:
    """An idle stop and a connect at the same instant: the stopping service says so on
    hello (instead of reading a store it is closing, which failed the client with an
    internal error), and the client waits for the next service rather than fail."""
    engine = await Engine.open(tmp_path / "home")
    service = Service(engine, on_stop=lambda: None)
    path = short_folder / "s.sock"
    await service.listen(path)
    attempts = 0

    async def connect() -> Any:
        nonlocal attempts
        attempts += 1
        if attempts == 3:  # the next service is up
            service.stopping = False
        return await asyncio.open_unix_connection(str(path))

    try:
        service.stopping = True
        client = await asyncio.wait_for(RemoteEngine.attach(connect, name="late"), 20)
        try:
            assert attempts == 3
            assert await client.sessions() == []
        finally:
            await client.close()
    finally:
        await service.close()
        await engine.close()
