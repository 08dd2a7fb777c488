"""Untrusted input: bad text, huge messages, unknown and malformed updates. Nothing crashes,
nothing already stored is lost."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from store import ViewTranscript, chunk_from_update
from store.paging import PAGE_BYTES
from store.store import Store
from tests.engine.test_engine_restart import TINY, tiny
from tests.support.engine_helpers import assert_live_equals_stored, open_engine, rows_of
from tests.support.forked_cockpit import run_command
from tests.support.helpers import feed, new_session, pieces, reply, texts, update


def stored(path: Path, sql: str) -> list[tuple[object, ...]]:
    """Read the database file with a separate plain connection."""
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


async def flushed(path: Path, sql: str, expected: list[tuple[object, ...]]) -> None:
    """Wait (a second at most) for the store's flush timer to write what `sql` expects."""
    for _ in range(100):
        if stored(path, sql) == expected:
            return
        await asyncio.sleep(0.01)
    assert stored(path, sql) == expected


async def test_invalid_utf8_and_lone_surrogates_are_stored_as_replacement_characters(
    store: Store,
) -> None:
    session = await new_session(store)
    broken = b"caf\xc3 \xff".decode("utf-8", "surrogateescape")
    await feed(
        store, [reply(session, "ok "), reply(session, broken), reply(session, " \ud83d end")]
    )
    await feed(
        store,
        [update(session, sessionUpdate="tool_call", toolCallId="t", title="bad \udcff title")],
    )
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert rows[0].text == "ok caf\ufffd \ufffd \ufffd end"
    assert rows[1].payload is not None
    assert rows[1].payload["title"] == "bad \ufffd title"


async def test_a_lone_surrogate_in_a_message_id_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=0.01) as store:
        session = await new_session(store)
        await store.begin_turn(session, "go")
        await feed(
            store,
            [
                reply(session, "first part, ", message_id="m\udcff1"),
                reply(session, "second part", message_id="m\udcff1"),
                reply(session, "another message", message_id="m\udcff2"),
            ],
        )
        await flushed(  # the timed flush writes the open row
            path,
            "SELECT key, text FROM messages WHERE kind = 'agent'",
            [
                ("agent:1:m\ufffd1", "first part, second part"),
                ("agent:1:m\ufffd2", "another message"),
            ],
        )
        await store.end_turn(session)


async def test_a_lone_surrogate_in_a_tool_call_id_is_stored(store: Store) -> None:
    session = await new_session(store)
    await feed(
        store,
        [
            update(session, sessionUpdate="tool_call", toolCallId="t\udcff", title="Run \ud800"),
            update(
                session,
                sessionUpdate="tool_call_update",
                toolCallId="t\udcff",
                status="completed",
                content=[{"type": "content", "content": {"type": "text", "text": "out\udcff"}}],
            ),
            reply(session, "done"),
        ],
    )
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert [(r.key, r.kind) for r in rows] == [("tool:t\ufffd", "tool"), ("agent:0:@2", "agent")]
    assert rows[0].payload == {
        "toolCallId": "t\ufffd",
        "title": "Run \ufffd",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "out\ufffd"}}],
    }


async def test_a_lone_surrogate_in_session_info_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=0.01) as store:
        session = await new_session(store)
        await feed(
            store,
            [
                update(session, sessionUpdate="session_info_update", title="Fix \udcff build"),
                update(session, sessionUpdate="current_mode_update", currentModeId="plan\ud800"),
            ],
        )
        await flushed(path, "SELECT title FROM sessions", [("Fix \ufffd build",)])
        record = await store.get_session(session)
        assert record is not None
        assert record.title == "Fix \ufffd build"
        assert record.info == {"title": "Fix \ufffd build"}
        assert record.modes == {"currentModeId": "plan\ufffd"}


async def test_a_ten_megabyte_message_is_one_row_and_one_page(store: Store) -> None:
    session = await new_session(store)
    huge = "".join(f"{n:09d}\n" for n in range(1_048_576))  # 10 MiB, no run repeats
    view = ViewTranscript()
    await feed(store, [reply(session, "a small one")], view)
    await feed(store, [update(session, sessionUpdate="tool_call", toolCallId="t", title="x")], view)
    await feed(store, [reply(session, piece) for piece in pieces(huge, 65536)], view)
    await feed(store, [update(session, sessionUpdate="tool_call", toolCallId="u", title="y")], view)
    await feed(store, [reply(session, huge)], view)  # re-sent whole: a recap, adds nothing
    await store.end_turn(session)
    tail = await store.page_before(session)
    assert [len(r.text) for r in tail.rows] == [0]
    page = await store.page_before(session, tail.rows[0].seq)
    assert [len(r.text) for r in page.rows] == [len(huge)]
    assert page.rows[0].bytes > PAGE_BYTES
    assert page.rows[0].text == huge
    assert page.has_more
    assert texts(view) == texts(await store.all_rows(session))


async def test_nul_bytes_and_escape_sequences_are_kept_as_sent(store: Store) -> None:
    session = await new_session(store)
    text = "nul:\x00 bell:\x07 csi:\x1b[2J osc:\x1b]52;c;aGk=\x07 end"
    await feed(store, [reply(session, text)])
    await store.end_turn(session)
    assert (await store.all_rows(session))[0].text == text


async def test_unknown_and_malformed_updates_become_notices(store: Store) -> None:
    session = await new_session(store)
    await feed(store, [reply(session, "before")])
    frames = await feed(
        store,
        [
            update(session, sessionUpdate="brand_new_update", payload={"x": 1}),
            chunk_from_update(session, {"no": "discriminator"}),
            update(session, sessionUpdate="tool_call", title="no id"),
            update(session, sessionUpdate="plan", entries="not a list"),
            update(session, sessionUpdate="agent_message_chunk", content="not a block"),
            update(
                session,
                sessionUpdate="agent_message_chunk",
                content={"type": "image", "mimeType": "image/png", "data": "AA=="},
            ),
            update(
                session,
                sessionUpdate="agent_message_chunk",
                content={"type": "resource_link", "uri": "file:///a.py", "name": "a.py"},
            ),
        ],
    )
    await store.end_turn(session)
    rows = await store.all_rows(session)
    # A notice is Cockpit's own row: the reply it interrupts goes on in the same row.
    assert [r.kind for r in rows] == ["agent", "notice", "notice", "notice", "notice"]
    assert "'brand_new_update'" in rows[1].text
    assert rows[1].payload == {"update": {"sessionUpdate": "brand_new_update", "payload": {"x": 1}}}
    assert "'malformed'" in rows[2].text
    assert rows[0].text == "before[image image/png][a.py](file:///a.py)"
    assert len(frames) == 6


async def test_a_huge_unknown_update_is_kept_truncated(store: Store) -> None:
    session = await new_session(store)
    await feed(store, [update(session, sessionUpdate="mystery", blob="x" * 1_000_000)])
    (row,) = await store.all_rows(session)
    assert row.kind == "notice"
    assert row.payload is not None
    assert len(row.payload["truncated"]) == 64 * 1024


async def test_malformed_updates_from_a_real_agent_become_notices_keeping_what_was_sent(
    tmp_path: Path,
) -> None:
    """params or update not an object, a text chunk whose content is not an object: each is
    a notice that previews it and keeps (a bounded copy of) what the agent sent."""
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session(tiny(), project)
        assert await engine.prompt(record.id, "bad") == "end_turn"
        rows = await rows_of(engine, record.id)
        assert [r.kind for r in rows] == ["user", "notice", "notice", "notice", "notice", "agent"]
        params, update_, content, huge = rows[1:5]
        assert (
            params.text
            == 'Ignored a session/update whose params are not an object from the agent: "x"'
        )
        assert params.payload == {"received": '"x"'}
        assert update_.text.endswith('whose update is not an object from the agent: "y"')
        assert update_.payload == {"received": '"y"'}
        assert "(agent_message_chunk) whose content is not an object" in content.text
        assert content.payload is not None
        assert '"content": "not a block"' in content.payload["received"]
        assert huge.payload is not None
        assert huge.payload["received"] == '"' + "z" * 4095
        assert huge.payload["receivedLength"] == 100_002
        assert len(huge.text) < 250 and huge.text.endswith("...")
        assert rows[5].text == "still here"
        assert_live_equals_stored(recorder, record.id, rows)


def cockpit_run(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_command(
        ["run", "--cwd", str(project), *args],
        env={**os.environ, "COCKPIT_HOME": str(home)},
        cwd=Path.cwd(),
        timeout=120,
    )


def test_cockpit_run_shows_notices_and_keeps_sdk_tracebacks_off_the_terminal(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    bad = cockpit_run(home, project, "--agent-cmd", f"{sys.executable} {TINY}", "bad")
    assert bad.returncode == 0, bad.stderr
    assert (
        '! Ignored a session/update whose params are not an object from the agent: "x"'
        in bad.stdout
    )
    assert "whose content is not an object" in bad.stdout
    assert "still here" in bad.stdout
    assert bad.stderr == ""
    # The demo's garbage includes an unknown notification, which the SDK logs with a
    # traceback: it goes to Cockpit's log file, not to the terminal.
    garbage = cockpit_run(home, project, "garbage")
    assert garbage.returncode == 0, garbage.stderr
    assert "Still here after the garbage." in garbage.stdout
    assert "Traceback" not in garbage.stderr and garbage.stderr == ""
    log = home / "logs" / "cockpit.log"
    assert "unknown/notification" in log.read_text()
    assert oct(log.stat().st_mode & 0o777) == "0o600"


async def test_a_data_folder_others_may_read_is_made_owner_only(tmp_path: Path) -> None:
    """A `COCKPIT_HOME` the user made with the usual 0755 let every user of the machine
    list it and read what it lets through; Cockpit makes its own folder 0700 when it opens
    it."""
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    async with open_engine(home):
        pass
    assert oct(home.stat().st_mode & 0o777) == "0o700"
