"""`cockpit answer SESSION --field k=v ... | --json FILE` answers the oldest form a
session's agent asks, through the service, from another process: values coerced by the
form's schema, a wrong one refused with a sentence and exit 2 (the form still waits), and
an OPTION still answering the oldest permission question, never a form."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cockpit.api import EngineAPI
from cockpit.client import Reach, open_engine
from cockpit.form_rules import MASK
from tests.service.test_service_control import in_thread, ok
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
async def client(service_home: Path) -> AsyncIterator[EngineAPI]:
    engine = await open_engine(service_home, reach=Reach())
    assert engine.detaches
    try:
        yield engine
    finally:
        await engine.close()


async def form_waits(engine: EngineAPI, session: str) -> str:
    engine.send(session, "form")
    await eventually(lambda: engine.pending_count(session) == 1, 30, "the form")
    request = engine.first_pending(session)
    assert request is not None and request.form is not None
    return request.id


async def replied(engine: EngineAPI, session: str, text: str) -> None:
    async def said() -> bool:
        rows = await engine.rows(session)
        return any(r.kind == "agent" and text in r.text for r in rows)

    await eventually(said, 30, f"the agent to say {text!r}")


async def test_a_form_answered_with_fields_and_with_json(
    service_home: Path, tmp_path: Path, client: EngineAPI
) -> None:
    engine = client
    session = (await engine.create_session("demo", tmp_path)).id
    await form_waits(engine, session)

    now = ok(await in_thread("events", "--json", "--session", session, home=service_home))
    (question,) = [json.loads(line) for line in now.stdout.splitlines() if '"question"' in line]
    assert question["kind"] == "form" and question["options"] == []
    fields = {field["name"]: field for field in question["form"]["fields"]}
    assert fields["licence"] == {
        "name": "licence", "kind": "choice", "title": "Licence", "required": True,
        "values": ["mit", "apache", "gpl"],
    }  # fmt: skip

    option = await in_thread("answer", session, "1", home=service_home)
    assert option.returncode == 2 and "only a form waits" in option.stderr

    wrong = await in_thread(
        "answer", session, "--field", "name=ok", "--field", "workers=lots", home=service_home
    )
    assert wrong.returncode == 2
    assert "Workers: 'lots' is not a whole number" in wrong.stderr
    assert "workers: Workers — integer" in wrong.stderr  # what each field takes
    unknown = await in_thread("answer", session, "--field", "colour=red", home=service_home)
    assert unknown.returncode == 2 and "no field 'colour'" in unknown.stderr
    assert engine.pending_count(session) == 1, "a wrong answer loses nothing"

    answered = ok(
        await in_thread(
            "answer", session,
            "--field", "name=atlas", "--field", "licence=MIT", "--field", "workers=2",
            "--field", "tests=yes", "--field", "targets=macos,linux",
            "--field", "api_token=tok-123456",
            home=service_home,
        )
    )  # fmt: skip
    assert "tok-123456" not in answered.stdout and f"api_token={MASK}" in answered.stdout
    await replied(engine, session, '"licence": "mit"')
    await replied(engine, session, '"targets": ["macos", "linux"]')

    await form_waits(engine, session)
    values = tmp_path / "values.json"
    values.write_text(json.dumps({"name": "from-json", "licence": "gpl", "ratio": 0.5}))
    ok(await in_thread("answer", session, "--json", str(values), home=service_home))
    await replied(engine, session, '"name": "from-json"')

    await form_waits(engine, session)
    ok(await in_thread("answer", session, "--decline", home=service_home))
    await replied(engine, session, "Form decline.")
    rows = [r for r in await engine.rows(session) if r.kind == "permission"]
    assert [r.payload["decidedBy"] for r in rows if r.payload] == ["cockpit answer"] * 3
    assert all("tok-123456" not in r.text and "tok-123456" not in str(r.payload) for r in rows)


async def test_bad_json_is_refused_with_a_message(
    service_home: Path, tmp_path: Path, client: EngineAPI
) -> None:
    engine = client
    session = (await engine.create_session("demo", tmp_path)).id
    await form_waits(engine, session)
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2")
    result = await in_thread("answer", session, "--json", str(bad), home=service_home)
    assert result.returncode == 2 and "is not JSON" in result.stderr
    assert "Traceback" not in result.stderr
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    result = await in_thread("answer", session, "--json", str(listed), home=service_home)
    assert result.returncode == 2 and "holds no object of field values" in result.stderr
    missing = await in_thread("answer", session, "--json", str(tmp_path / "no"), home=service_home)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert engine.pending_count(session) == 1
    ok(await in_thread("answer", session, "--cancel", home=service_home))
    await replied(engine, session, "Form cancel.")
