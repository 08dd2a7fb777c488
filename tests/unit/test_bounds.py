"""The bounds' pure rules (what a draft and a request weigh), the bounded line reader, the
socket's transport and the rotating log files, each on its own: real streams and sockets,
real files, no service."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit import bounds
from cockpit.bounds import (
    DRAFT_BYTES,
    ENVELOPE_BYTES,
    REQUEST_BYTES,
    RequestTooLarge,
    draft_too_long,
    encoded,
    prompt_too_long,
)
from cockpit.channel.transport import OVERSIZED, LineTransport
from cockpit.cli.logfile import log_to_file
from cockpit.lines import HEAD_BYTES, read_line
from cockpit.logfiles import LOG_BACKUPS, LOG_BYTES, OutputLog, RotatingLog, writes_to
from cockpit.paths import service_log

# -- what a draft and a prompt weigh -----------------------------------------------------------

texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)


@given(texts)
def test_no_character_weighs_more_than_the_quick_checks_assume(text: str) -> None:
    """Both checks skip counting short texts: sound only if no character takes more than 4
    bytes in a draft (UTF-8) and 6 in a request (JSON, control characters escaped)."""
    assert len(text.encode("utf-8", "replace")) <= 4 * len(text)
    assert len(encoded(text)) <= 6 * len(text) + 3  # the quotes and the newline


DRAFTS = {
    "ascii at the bound": ("x", DRAFT_BYTES, False),
    "ascii past it": ("x", DRAFT_BYTES + 1, True),
    "two-byte at the bound": ("é", DRAFT_BYTES // 2, False),
    "four-byte past it": ("😀", DRAFT_BYTES // 4 + 1, True),  # a quarter of the characters
}


@pytest.mark.parametrize("case", DRAFTS)
def test_a_draft_is_weighed_in_bytes_of_utf8(case: str) -> None:
    character, count, too_long = DRAFTS[case]
    assert draft_too_long(character * count) is too_long
    assert draft_too_long(character * count + "x")  # one byte more always tips it


PROMPTS = {
    "at the bound": ("x", REQUEST_BYTES - ENVELOPE_BYTES - 3, False),
    "past it": ("x", REQUEST_BYTES - ENVELOPE_BYTES - 2, True),
    "newlines, two bytes each on the wire": ("\n", REQUEST_BYTES // 2, True),
    "past a draft's bound": ("x", 3 * DRAFT_BYTES, False),
}


@pytest.mark.parametrize("case", PROMPTS)
def test_a_prompt_is_weighed_as_the_wire_carries_it(case: str) -> None:
    character, count, too_long = PROMPTS[case]
    assert prompt_too_long(character * count) is too_long


@pytest.mark.parametrize(
    ("size", "bound", "words"),
    [
        (20 * 1024 * 1024, REQUEST_BYTES, ("20.0 MB", "16.0 MB")),
        (DRAFT_BYTES + 1, DRAFT_BYTES, ("1,025 KB", "1,024 KB")),  # never "1.0 MB over 1.0 MB"
    ],
)
def test_a_size_past_a_bound_never_reads_as_the_bound(
    size: int, bound: int, words: tuple[str, str]
) -> None:
    assert bounds.past(size, bound) == words


def test_the_refusals_say_how_big_and_what_to_do() -> None:
    draft = bounds.draft_refusal("x" * (2 * DRAFT_BYTES))
    assert "2.0 MB" in draft and "1.0 MB" in draft and "not saved" in draft
    prompt = bounds.prompt_refusal("x" * (20 * 1024 * 1024))
    assert "20.0 MB" in prompt and "16.0 MB" in prompt and "nothing was sent" in prompt


# -- a bounded line reader ---------------------------------------------------------------------


def stream_of(data: bytes, limit: int = 1024) -> asyncio.StreamReader:
    """A stream that holds `data` and then ends, read `limit` bytes at a time."""
    stream = asyncio.StreamReader(limit=limit)
    stream.feed_data(data)
    stream.feed_eof()
    return stream


async def test_a_line_past_the_bound_keeps_its_head_and_the_next_line_comes_whole() -> None:
    long = b'{"jsonrpc":"2.0","id":7,' + b"x" * 50_000 + b"}\n"
    stream = stream_of(long + b'{"id":8}\n' + b"tail")
    first = await read_line(stream, max_line=10_000)
    assert first is not None and first.too_long
    assert first.size == len(long)
    assert first.data == long[:HEAD_BYTES]
    second = await read_line(stream, max_line=10_000)
    assert second is not None and (second.data, second.too_long) == (b'{"id":8}\n', False)
    third = await read_line(stream, max_line=10_000)
    assert third is not None and third.data == b"tail"  # no newline at the end
    assert await read_line(stream, max_line=10_000) is None


async def test_without_a_bound_a_line_comes_whole_however_long() -> None:
    long = b"y" * 100_000 + b"\n"
    line = await read_line(stream_of(long), max_line=None)
    assert line is not None and line.data == long and not line.too_long


@given(st.lists(st.binary(max_size=3000).map(lambda b: b.replace(b"\n", b"")), max_size=8))
async def test_lines_are_read_as_they_were_written(lines: list[bytes]) -> None:
    stream = stream_of(b"".join(line + b"\n" for line in lines), limit=256)
    got = []
    while (line := await read_line(stream, max_line=1000)) is not None:
        got.append(line)
    assert [line.size for line in got] == [len(line) + 1 for line in lines]
    for line, written in zip(got, lines, strict=True):
        assert line.too_long is (len(written) + 1 > 1000)
        assert line.data == ((written + b"\n")[:HEAD_BYTES] if line.too_long else written + b"\n")


# -- the socket's transport --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def transport_pair(**options: Any) -> AsyncIterator[tuple[LineTransport, socket.socket]]:
    """A transport on one end of a socket pair (with `options`), and the other end."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours, limit=4096)
    theirs.setblocking(False)
    try:
        yield LineTransport(reader, writer, **options), theirs
    finally:
        writer.close()
        theirs.close()


async def test_the_reading_side_skips_what_is_no_message_and_says_so_without_it() -> None:
    """Garbage, JSON that is no object and a message the check refuses are skipped, each
    said in words that hold nothing of the line; the message after them comes."""
    said: list[str] = []

    def check(message: Any) -> str | None:
        return "a message whose method is not a string" if message.get("method") == 5 else None

    async with transport_pair(max_line=1000, check=check, on_problem=said.append) as (
        transport,
        theirs,
    ):
        theirs.sendall(
            b"SECRET not json\n42\n[1]\n\n" + b'{"method":5,"secret":1}\n{"id":1,"result":2}\n'
        )
        assert await asyncio.wait_for(transport.receive(), 5) == {"id": 1, "result": 2}
    assert said == [
        "a line that is not JSON",
        "a JSON line that is not an object",
        "a JSON line that is not an object",
        "a message whose method is not a string",
    ]
    assert not any("SECRET" in problem or "secret" in problem for problem in said)


async def test_a_request_past_the_bound_stands_for_an_oversized_one_with_its_id() -> None:
    said: list[str] = []
    async with transport_pair(max_line=1000, on_problem=said.append) as (transport, theirs):
        request = {"jsonrpc": "2.0", "id": 41, "method": "cockpit/call", "params": "s" * 5000}
        theirs.sendall(encoded(request) + b'{"jsonrpc":"2.0","method":"cockpit/show"}\n')
        assert await asyncio.wait_for(transport.receive(), 5) == {
            "jsonrpc": "2.0",
            "id": 41,
            "method": OVERSIZED,
            "params": {"bytes": len(encoded(request))},
        }
        assert await asyncio.wait_for(transport.receive(), 5) == {
            "jsonrpc": "2.0",
            "method": "cockpit/show",
        }
    assert said == [f"a line of {len(encoded(request)):,} bytes, over the 1,000 taken"]


class WatchedGate(asyncio.Semaphore):
    """A gate that says when someone waits on it, full."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.waited_on = asyncio.Event()

    async def acquire(self) -> Literal[True]:
        if self.locked():
            self.waited_on.set()
        return await super().acquire()


async def test_a_full_gate_reads_nothing_more_until_a_place_is_given_back() -> None:
    gate = WatchedGate(2)
    async with transport_pair(gate=gate) as (transport, theirs):
        theirs.sendall(b"".join(encoded({"method": "m", "id": n}) for n in range(3)))
        assert await transport.receive() == {"method": "m", "id": 0}
        assert await transport.receive() == {"method": "m", "id": 1}
        third = asyncio.ensure_future(transport.receive())
        await asyncio.wait_for(gate.waited_on.wait(), 5)  # the transport waits for a place
        assert not third.done()  # two requests are being handled
        gate.release()
        assert await asyncio.wait_for(third, 5) == {"method": "m", "id": 2}


async def test_the_sending_side_refuses_a_request_past_its_bound_and_sends_nothing() -> None:
    async with transport_pair(max_send=1000) as (transport, theirs):
        with pytest.raises(RequestTooLarge, match="it was not sent"):
            await transport.send({"method": "m", "params": "x" * 2000})
        await transport.send({"method": "small"})
        received = asyncio.get_running_loop().sock_recv(theirs, 65536)
        assert await asyncio.wait_for(received, 5) == encoded({"method": "small"})


# -- the log files -----------------------------------------------------------------------------


def test_a_log_never_grows_past_its_bound(tmp_path: Path) -> None:
    """Ten thousand records into a log bounded at 20 KB with 2 backups: every file stays
    within the bound, no more than three are kept, all owner-only, and the newest records
    are in the current one."""
    logger = logging.getLogger("tests.bounds.rotation")
    logger.propagate = False
    handler = RotatingLog(tmp_path / "logs" / "cockpit.log", max_bytes=20_000, backups=2)
    logger.addHandler(handler)
    try:
        for number in range(10_000):
            logger.warning("record %d", number)
    finally:
        logger.removeHandler(handler)
        handler.close()
    files = sorted((tmp_path / "logs").iterdir())
    assert [path.name for path in files] == ["cockpit.log", "cockpit.log.1", "cockpit.log.2"]
    for path in files:
        assert path.stat().st_size <= 20_000
        assert path.stat().st_mode & 0o777 == 0o600
    assert "record 9999" in files[0].read_text()


def test_a_log_that_is_the_process_output_takes_it_along_when_it_rotates(tmp_path: Path) -> None:
    """What the process writes on its own descriptors (a print, a crash's traceback) lands
    in the current file after a rotation, and counts towards its size."""
    path = tmp_path / "service.log"
    output = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)  # as it is started
    stray = os.dup(output)
    assert writes_to(stray, path)
    logger = logging.getLogger("tests.bounds.output")
    logger.propagate = False
    handler = OutputLog(path, descriptors=(stray,), max_bytes=5_000, backups=1)
    logger.addHandler(handler)
    try:
        for number in range(400):
            logger.warning("record %d", number)
            os.write(stray, f"printed {number}\n".encode())
    finally:
        logger.removeHandler(handler)
        handler.close()
        os.close(stray)
        os.close(output)
    current = path.read_text()
    assert "printed 399" in current and "record 399" in current
    assert path.stat().st_size <= 5_000 + 100  # a print after the last check may add a line
    assert (tmp_path / "service.log.1").stat().st_size <= 5_000 + 100
    assert not (tmp_path / "service.log.2").exists()
    elsewhere = os.open(os.devnull, os.O_RDONLY)
    try:
        assert not writes_to(elsewhere, path)
    finally:
        os.close(elsewhere)


def test_cockpit_log_is_a_rotating_log(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        log_to_file(tmp_path)
        logs = [handler for handler in root.handlers if isinstance(handler, RotatingLog)]
        assert [(h.maxBytes, h.backupCount) for h in logs] == [(LOG_BYTES, LOG_BACKUPS)]
    finally:
        for handler in list(root.handlers):
            if handler not in before:
                root.removeHandler(handler)
                handler.close()


DETACHED_SERVICE_LOGS = """
import logging, sys
from pathlib import Path
from cockpit import logfiles
from cockpit.service import daemon
logfiles.LOG_BYTES = 5_000  # the bound, lowered for the test (read as the handler is made)
daemon.log_to_output(Path(sys.argv[1]))
records = logging.getLogger("cockpit.service.server")
for number in range(500):
    records.info("client-%d attached", number)
print("printed last", flush=True)
"""


def test_a_detached_service_rotates_its_log_and_its_output_follows(tmp_path: Path) -> None:
    """A service whose output is its log (as a client starts it, in the background) logs
    through a rotating handler: the log stays within its bound, and what the service
    prints after a rotation lands in the new file. In the foreground it logs to stderr."""
    log = service_log(tmp_path)
    log.parent.mkdir(parents=True)
    with open(log, "ab") as output:
        subprocess.run(
            [sys.executable, "-c", DETACHED_SERVICE_LOGS, str(tmp_path)],
            stdout=output,
            stderr=output,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        )
    assert log.stat().st_size <= 5_000 + 100
    assert log.read_text().endswith("printed last\n")
    assert "client-499 attached" in log.read_text()
    assert (log.parent / "service.log.1").exists()
    assert not (log.parent / f"service.log.{LOG_BACKUPS + 1}").exists()
    foreground = subprocess.run(
        [sys.executable, "-c", DETACHED_SERVICE_LOGS, str(tmp_path / "elsewhere")],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert "client-499 attached" in foreground.stderr
