"""The forms an agent asks (`elicitation/create`), end to end with real agents: the demo's
`form` (a field of each kind) and `link` (a URL, then `elicitation/complete`), and a tiny
agent's hostile schemas. Through the engine in process and through the service (the
`engines` fixture runs both): a form waits like a permission question, is answered with
values coerced by its schema, leaves a row with its secrets masked, and never answers
itself."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import warnings
from pathlib import Path

import pytest

from cockpit.api import AgentSpec, EngineAPI, PermissionRequest, Status
from cockpit.form_rules import MASK
from tests.engine.test_engine_restart import TINY
from tests.support.engine_helpers import open_engine
from tests.support.ui_service_helpers import Engines
from tests.support.waiting import eventually

TOKEN = "sk-very-secret-4242"
FILLED = {
    "name": "atlas",
    "api_token": TOKEN,
    "workers": "8",
    "ratio": "0.25",
    "tests": "no",
    "licence": "Apache 2.0",
    "targets": "linux, windows",
}
"""What a user types in each field of the demo's form, as text (the command line's way)."""


async def asked(engine: EngineAPI, session: str) -> PermissionRequest:
    """The form the session's agent asks, once it waits."""
    await eventually(lambda: engine.first_pending(session) is not None, 30, "the form")
    request = engine.first_pending(session)
    assert request is not None and request.form is not None
    return request


async def replies(engine: EngineAPI, session: str) -> list[str]:
    return [row.text for row in await engine.rows(session) if row.kind == "agent"]


def database(home: Path) -> bytes:
    """Every byte of the home's files: the store (the database and its write-ahead log),
    the logs, the config."""
    return b"".join(path.read_bytes() for path in sorted(home.rglob("*")) if path.is_file())


async def test_a_form_of_each_kind_is_answered_with_typed_values(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        record = await engine.create_session("demo", engines.project)
        turn = asyncio.create_task(engine.prompt(record.id, "form"))
        request = await asked(engine, record.id)
        form = request.form
        assert form is not None
        assert [(f.name, f.kind) for f in form.fields] == [
            ("name", "string"),
            ("api_token", "string"),
            ("workers", "integer"),
            ("ratio", "number"),
            ("tests", "boolean"),
            ("licence", "choice"),
            ("targets", "choices"),
        ]
        assert [f.name for f in form.fields if f.secret] == ["api_token"]
        assert engine.status(record.id) == Status.WAITING
        engine.allow_automatically(record.id)  # `--yes` answers questions, never forms
        await asyncio.sleep(0.5)
        assert engine.first_pending(record.id) == request

        with pytest.raises(ValueError, match="Workers is at most 16"):
            await engine.answer_form(request.id, "accept", {**FILLED, "workers": "99"})
        with pytest.raises(ValueError, match="no field 'colour'"):
            await engine.answer_form(request.id, "accept", {**FILLED, "colour": "red"})
        assert engine.first_pending(record.id) == request  # a bad answer loses nothing

        await engine.answer_form(request.id, "accept", FILLED)
        assert await asyncio.wait_for(turn, 30) == "end_turn"
        said = json.loads((await replies(engine, record.id))[-1].split("Form answered: ")[1])
        assert said == {
            "api_token": f"<{len(TOKEN)} characters>",
            "licence": "apache",
            "name": "atlas",
            "ratio": 0.25,
            "targets": ["linux", "windows"],
            "tests": False,
            "workers": 8,
        }
        (row,) = [r for r in await engine.rows(record.id) if r.kind == "permission"]
        assert row.payload is not None and row.payload["values"]["api_token"] == MASK
        assert row.payload["decidedBy"] == "user" and row.payload["action"] == "accept"
        assert TOKEN not in row.text and "api_token=" + MASK in row.text
        assert engine.pending_permissions() == []
    finally:
        await engine.close()
    assert TOKEN.encode() not in database(engines.home)


async def test_a_form_cancelled_or_declined(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        record = await engine.create_session("demo", engines.project)
        for action in ("cancel", "decline"):
            turn = asyncio.create_task(engine.prompt(record.id, "form"))
            request = await asked(engine, record.id)
            await engine.answer_form(request.id, action)
            assert await asyncio.wait_for(turn, 30) == "end_turn"
            assert (await replies(engine, record.id))[-1].endswith(f"Form {action}.")
        rows = [r.text for r in await engine.rows(record.id) if r.kind == "permission"]
        assert [text.split(" the form")[0] for text in rows] == ["Cancelled", "Declined"]
    finally:
        await engine.close()


async def test_a_turn_cancelled_cancels_its_form(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        record = await engine.create_session("demo", engines.project)
        turn = asyncio.create_task(engine.prompt(record.id, "form"))
        await asked(engine, record.id)
        assert await engine.cancel(record.id)
        await asyncio.wait_for(turn, 30)
        assert engine.pending_permissions() == []
        rows = [r.text for r in await engine.rows(record.id) if r.kind == "permission"]
        assert len(rows) == 1 and rows[0].startswith("Cancelled the form")
    finally:
        await engine.close()


async def test_a_link_is_shown_then_completed(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        record = await engine.create_session("demo", engines.project)
        turn = asyncio.create_task(engine.prompt(record.id, "link"))
        request = await asked(engine, record.id)
        assert request.form is not None and request.form.is_link
        assert request.form.url == "https://example.com/demo/sign-in"
        await engine.answer_form(request.id, "accept")
        assert await asyncio.wait_for(turn, 30) == "end_turn"
        assert (await replies(engine, record.id))[-1] == "Signed in."

        async def noted() -> bool:
            texts = [r.text for r in await engine.rows(record.id)]
            return "The agent says the link https://example.com/demo/sign-in is done." in texts

        await eventually(noted, 15, "the completion noted")
    finally:
        await engine.close()


async def test_hostile_forms_are_refused_with_an_error_and_a_row(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, engines.project)
        assert await engine.prompt(record.id, "raw=bad-forms") == "end_turn"
        texts = [r.text for r in await engine.rows(record.id) if r.kind != "user"]
        assert texts[-1] == "answers: [" + ", ".join(["-32602"] * 8) + "]"
        refused = texts[:-1]  # refused as they were read: the SDK's refusals come first
        assert len(refused) == 8 and all(text.startswith("Refused") for text in refused)
        reasons = [
            "field 'address' is of type \"object\"",
            "properties: Input should be a valid dictionary",
            "5,000 fields",
            "characters; a form may have 65,536",
            "enum.0: Input should be",
            "field 'x' is a list of something else than choices",
            "not a web address",
            "forms and links",
        ]
        for reason in reasons:
            assert sum(reason in text for text in refused) >= 1, reason
        assert all(len(text) < 2000 for text in refused)
        assert engine.pending_permissions() == []
    finally:
        await engine.close()


async def test_escape_sequences_in_a_form_never_reach_the_screen(engines: Engines) -> None:
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, engines.project)
        turn = asyncio.create_task(engine.prompt(record.id, "raw=escape-form"))
        request = await asked(engine, record.id)
        form = request.form
        assert form is not None
        shown = [form.message, request.title, *(f.title + f.description for f in form.fields)]
        assert all("\x1b" not in text and "\x07" not in text for text in shown)
        assert form.fields[0].title == "Name red"
        await engine.answer_form(request.id, "cancel")
        assert await asyncio.wait_for(turn, 30) == "end_turn"
        assert (await replies(engine, record.id))[-1] == "answers: [None]"
    finally:
        await engine.close()


def test_the_database_file_is_readable(tmp_path: Path) -> None:
    """`database` reads what sqlite wrote (a guard for the secret search above)."""
    path = tmp_path / "store" / "cockpit.db"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.execute("create table t (x)")
        db.execute("insert into t values ('findme')")
    assert b"findme" in database(tmp_path)


async def test_the_sdk_says_nothing_of_unstable_methods(
    data_home: Path, readme_project: Path
) -> None:
    """Elicitation is "unstable" in the SDK: had Cockpit not opted in, the SDK would warn on
    the terminal (under the TUI) at every form, and refuse it."""
    async with open_engine(data_home) as (engine, _):
        record = await engine.create_session("demo", readme_project)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            turn = asyncio.create_task(engine.prompt(record.id, "link"))
            request = await asked(engine, record.id)
            await engine.answer_form(request.id, "decline")
            assert await asyncio.wait_for(turn, 30) == "end_turn"
        assert [str(w.message) for w in caught if "unstable" in str(w.message)] == []
        assert (await replies(engine, record.id))[-1].endswith("Link decline.")


async def test_a_form_the_agent_withdraws_goes_away(engines: Engines) -> None:
    """`$/cancel_request` naming a form's request: the form leaves the session and the
    inbox, with a row saying the agent cancelled it, and the agent hears "cancel"."""
    engines.project.mkdir(parents=True, exist_ok=True)
    engine = await engines.factory()()
    try:
        spec = AgentSpec(name="tiny", command=(sys.executable, TINY))
        record = await engine.create_session(spec, engines.project)
        turn = asyncio.create_task(engine.prompt(record.id, "withdraw-form after=2"))
        await asked(engine, record.id)
        assert await asyncio.wait_for(turn, 30) == "end_turn"
        assert (await replies(engine, record.id))[-1] == "withdrawn: {'action': 'cancel'}"
        assert engine.pending_permissions() == []
        rows = [r for r in await engine.rows(record.id) if r.kind == "permission"]
        assert len(rows) == 1 and rows[0].text.startswith("Cancelled the form “Your name?” (agent)")
    finally:
        await engine.close()
