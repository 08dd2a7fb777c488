"""Every request an agent makes is a row, refused or not (issue 13 §3, issue 31 §4). The
SDK answers a request off ACP's schema "Invalid params", and one of a method Cockpit does
not serve "Method not found", without calling Cockpit: each such request now leaves a row,
stored before the agent hears the answer, and never becomes a question. Past 100 refused
requests in a turn, one row counts the rest. The agent is a real subprocess
(`tests/support/tiny_agent.py`, `refuse`), through the engine, `cockpit run --local` and the
service."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from cockpit.api import AgentSpec
from cockpit.cli.run import StreamPrinter
from cockpit.engine.refusals import LISTED, PERMISSION, count_row
from store import Row
from store.store import Store
from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY
from tests.support import service_helpers
from tests.support.engine_helpers import allow_all, assert_live_equals_stored, open_engine, rows_of
from tests.support.helpers import new_session, reply
from tests.support.tiny_agent import MALFORMED_REQUESTS

TINY_SPEC = AgentSpec(name="tiny", command=(sys.executable, TINY))
START = 60
"""Seconds the agent may take to start: on a loaded machine 15 were not always enough."""
EVERY_ONE = len(MALFORMED_REQUESTS)
ANSWERS = f"answers: -32601 x2, -32602 x{EVERY_ONE - 2}"
"""What the agent heard: "Method not found" for the two methods no client serves,
"Invalid params" for the rest."""

REASONS = [
    "options: Input should be a valid list",
    "toolCall: Field required",
    "toolCall.toolCallId: Input should be a valid string",
    "options.0.kind: Input should be 'allow_once'",
    "sessionId: Field required",
    "its params are not an object",
    "it has no params",
    "path: Input should be a valid string",
    "content: Field required",
    "command: Input should be a valid string",
    "terminalId: Field required",
    "Cockpit serves no such request",
    "Cockpit serves no such request",
]
"""Why each of MALFORMED_REQUESTS was refused, as its row says."""


def refused_rows(rows: list[Row]) -> list[Row]:
    return [row for row in rows if row.text.startswith("Refused")]


def counted(rows: list[Row]) -> list[Row]:
    return [row for row in rows if (row.payload or {}).get("refusedCount")]


def check_rows(rows: list[Row]) -> None:
    """One row for each of MALFORMED_REQUESTS, in order, saying what and why, printable."""
    refused = refused_rows(rows)
    assert [(row.kind, (row.payload or {}).get("method")) for row in refused] == [
        ("permission" if method == PERMISSION else "notice", method)
        for method, _ in MALFORMED_REQUESTS
    ]
    for row, reason in zip(refused, REASONS, strict=True):
        assert reason in row.text, row.text
        assert row.text.isprintable(), row.text  # the escape sequences of a title too
    assert refused[0].text.startswith("Refused: Delete \\x1b]0;pwned\\x07")
    assert refused[0].text.endswith('the agent was answered "Invalid params".')
    assert refused[-1].text == (
        "Refused the agent's _vendor/extension request (Cockpit serves no such request); "
        'it was answered "Method not found".'
    )
    assert (refused[1].payload or {})["decidedBy"] == "refused"
    assert json.loads((refused[5].payload or {})["received"])[1][0]["optionId"] == "yes"
    assert not [row for row in rows if row.kind == "tool"]  # nor did the tool calls count


async def test_each_malformed_request_is_a_row_stored_before_its_error_answer(
    tmp_path: Path,
) -> None:
    """Options not a list, no toolCall, a numeric toolCallId, an option of an unknown
    kind, no sessionId, params that are a list or none; file and terminal requests off
    the schema; methods no client serves. None of them becomes a question."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home", timeout=START) as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        assert await engine.prompt(record.id, "refuse") == "end_turn"
        rows = await rows_of(engine, record.id)
        check_rows(rows)
        assert rows[-1].text == f"{ANSWERS}; stored before their answer: {EVERY_ONE}/{EVERY_ONE}"
        assert not recorder.asked and not engine.pending_permissions(record.id)
        assert not counted(rows)
        assert_live_equals_stored(recorder, record.id, rows)
        assert await engine.prompt(record.id, "hello") == "end_turn"  # the session goes on
        assert (await rows_of(engine, record.id))[-1].text == "ok"


async def test_past_100_refused_requests_in_a_turn_one_row_counts_the_rest(
    tmp_path: Path,
) -> None:
    """250 refused requests: 100 rows and one row that counts 150, updated in place; the
    next turn lists its own again."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home", timeout=START) as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        assert await engine.prompt(record.id, "refuse n=250") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert len(refused_rows(rows)) == LISTED == 100
        (count,) = counted(rows)
        assert count.text.startswith("…and 150 more refused requests this turn")
        assert (count.payload or {})["refusedCount"] == 150
        assert count.seq == max(row.seq for row in refused_rows(rows)) + 1  # one key, in place
        assert rows[-1].text.endswith("; stored before their answer: 250/250")
        assert rows[-1].text.startswith("answers: -32601 x38, -32602 x212")
        assert not recorder.asked
        assert_live_equals_stored(recorder, record.id, rows)

        assert await engine.prompt(record.id, "refuse") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert len(refused_rows(rows)) == LISTED + EVERY_ONE
        assert counted(rows) == [count]
        assert_live_equals_stored(recorder, record.id, rows)


def run_and_show(
    home: Path, project: Path, *, service: bool, prompt: str = "refuse"
) -> tuple[str, list[Row]]:
    """`cockpit run` of the agent's `refuse` turn: what it printed, and then what
    `cockpit show --json` shows of it."""
    run = ("run", "--cwd", str(project), "--agent-cmd", f"{sys.executable} {TINY}", prompt)
    if service:
        with service_helpers.services_stopped(home):
            result = service_helpers.cockpit(*run, home=home)
            listed = service_helpers.cockpit("ls", "--json", home=home)
            shown = service_helpers.cockpit("show", json.loads(listed.stdout)[0]["id"], "--json",
                                            home=home)  # fmt: skip
            assert service_helpers.service_pid(home) is not None  # the service ran the agent
    else:
        result = cockpit(home, *run)
        listed = cockpit(home, "ls", "--json")
        shown = cockpit(home, "show", json.loads(listed.stdout)[0]["id"], "--json")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "Refused: a permission request (not a valid ACP request: it has no params)" in (
        result.stdout
    )
    rows = json.loads(shown.stdout)["rows"]
    return result.stdout, [Row(**{**row, "session": "", "bytes": 0}) for row in rows]


@pytest.mark.parametrize("service", [True, False], ids=["service", "local"])
def test_cockpit_run_stores_a_row_for_each_malformed_request(
    tmp_path: Path, project_dir: Path, service: bool
) -> None:
    _, rows = run_and_show(tmp_path / "home", project_dir, service=service)
    check_rows(rows)
    assert rows[-1].text == f"{ANSWERS}; stored before their answer: {EVERY_ONE}/{EVERY_ONE}"


def test_through_the_service_250_refused_requests_are_100_rows_and_a_count(
    tmp_path: Path, project_dir: Path
) -> None:
    printed, rows = run_and_show(
        tmp_path / "home", project_dir, service=True, prompt="refuse n=250"
    )
    assert len(refused_rows(rows)) == LISTED
    assert [(row.payload or {})["refusedCount"] for row in counted(rows)] == [150]
    assert rows[-1].text.endswith("; stored before their answer: 250/250")
    assert printed.rstrip().endswith("…and 150 more refused requests this turn, each answered "
                                     "with an error (past 100 in a turn they are counted here, "
                                     "not listed).")  # fmt: skip


async def test_cockpit_run_prints_the_count_again_as_it_last_stood(store: Store) -> None:
    """The count is one row replaced in place: `cockpit run` printed its first value only
    ("1 more"), and its last at the end would otherwise never be seen."""
    session = await new_session(store)
    out = io.StringIO()
    printer = StreamPrinter(out, session, sanitize=False)
    for chunk in [count_row(session, 1), count_row(session, 2), reply(session, "done")]:
        for frame in await store.apply(chunk):
            printer.frame(frame)
    printer.finish()
    first, reply_text, last = out.getvalue().split("\n\n")
    assert first.startswith("! …and 1 more refused request this turn")
    assert reply_text == "done"
    assert last.startswith("! …and 2 more refused requests this turn") and last.endswith(".\n")


async def test_meta_keys_that_would_stand_in_for_params_are_taken_out_with_a_row(
    tmp_path: Path,
) -> None:
    """The SDK passes `_meta` keys after the request's checked params: `"path": 5` stood
    in for the path (the read ended in "Internal error" and no row), and `self` could not
    be passed at all. They are taken out; the read is served as its params say."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("tiny notes")
    async with open_engine(tmp_path / "home", timeout=START) as (engine, recorder):
        record = await engine.create_session(TINY_SPEC, project)
        assert await engine.prompt(record.id, "meta-read=notes.txt") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert [row.text for row in rows[1:]] == [
            "Ignored path, self in the _meta of the agent's read of "
            f"{project / 'notes.txt'}: the SDK would have passed them in place of the "
            "request's own fields.",
            "read: tiny notes",
        ]
        assert (rows[1].payload or {})["ignoredMeta"] == ["path", "self"]
        assert_live_equals_stored(recorder, record.id, rows)


async def test_requests_cockpit_cannot_serve_as_sent_are_rows_too(tmp_path: Path) -> None:
    """Terminal requests naming a terminal Cockpit never made, and a program that does not
    exist, were answered with an error and no row."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home", auto_answer=allow_all, timeout=START) as (engine, _):
        record = await engine.create_session(TINY_SPEC, project)
        assert await engine.prompt(record.id, "raw=no-terminal") == "end_turn"
        assert await engine.prompt(record.id, "raw=no-program") == "end_turn"
        texts = [row.text for row in await rows_of(engine, record.id) if row.kind != "user"]
    unknown = "no terminal 'term-\\x1b[2J' in this session"
    assert texts == [
        f"Refused the agent's terminal/output request: {unknown}.",
        f"Refused the agent's terminal/wait_for_exit request: {unknown}.",
        f"Refused the agent's terminal/kill request: {unknown}.",
        f"Refused the agent's terminal/release request: {unknown}.",
        "answers: [-32602, -32602, -32602, -32602]",
        "Allowed once: Run /no/such/program (by policy)",
        "Refused the agent's run of /no/such/program: [Errno 2] No such file or directory: "
        "'/no/such/program'.",
        "answers: [-32602]",
    ]
