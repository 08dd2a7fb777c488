"""The Store end to end on a real SQLite file: folding, frames, durability, paging, sessions."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from pathlib import Path

import pytest

from store import UnknownSession, ViewTranscript, note
from store.chunks import Chunk
from store.fold_rules import RECAP_LOOKBACK
from store.session_fold import NAMED_ROWS
from store.store import Store
from store.workload import markdown_reply
from tests.support.helpers import feed, new_session, pieces, reply, texts, thought, update

TABLE = (
    "Here are the results:\n\n| file | lines | status |\n|------|------:|--------|\n"
    "| store.py | 420 | ok |\n| fold.py | 230 | ok |\n| view.py | 120 | ok |\n\nAll green."
)


def stored(path: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    """Read the database file with a separate plain connection: what a crash would leave."""
    with sqlite3.connect(path) as db:
        return db.execute(sql, params).fetchall()


async def test_a_streamed_reply_is_one_row_and_its_frames_rebuild_it(store: Store) -> None:
    session = await new_session(store)
    view = ViewTranscript()
    _, frames = await store.begin_turn(session, "show me the table")
    for frame in frames:
        view.apply(frame)
    live = await feed(
        store, [reply(session, "")] + [reply(session, p) for p in pieces(TABLE, 3)], view
    )
    assert all(frame.delta for frame in live)
    assert [frame.n for frame in live] == [*list(range(3, len(TABLE), 3)), len(TABLE)]
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert texts(rows) == [("user", "show me the table"), ("agent", TABLE)]
    assert texts(view) == texts(rows)


async def test_a_table_cut_by_a_page_boundary_elsewhere_stays_whole_here(store: Store) -> None:
    # A row-per-token store paged by 120 rows cuts this 700-chunk reply; here it is one row,
    # so under any page size it arrives whole, in exactly one page.
    session = await new_session(store)
    await store.begin_turn(session, "first")
    await feed(store, [reply(session, p) for p in pieces("before the table " * 10, 4)])
    table = markdown_reply(random.Random(3), 2400)
    await feed(store, [thought(session, "thinking it over")])
    await feed(store, [reply(session, p) for p in pieces(table, 3)])
    await feed(store, [update(session, sessionUpdate="tool_call", toolCallId="t1", title="Read")])
    await feed(store, [reply(session, p) for p in pieces("after the table", 4)])
    await store.end_turn(session)
    for max_rows in (1, 2, 3, 120):
        for max_bytes in (1, 100, 3000, 256 * 1024):
            holders = []
            before = None
            while True:
                page = await store.page_before(session, before, max_rows, max_bytes)
                holders += [row for row in page.rows if "|------|" in row.text]
                if not page.has_more:
                    break
                before = page.rows[0].seq
            assert [row.text for row in holders] == [table]


async def test_snapshot_frames_carry_only_the_new_tail(store: Store) -> None:
    session = await new_session(store)
    frames = await feed(
        store,
        [reply(session, "Hello"), reply(session, "Hello, world"), reply(session, "Hello, world!")],
    )
    assert [(f.part, f.n, f.delta) for f in frames] == [
        ("Hello", 5, True),
        (", world", 12, True),
        ("!", 13, True),
    ]
    assert len({f.key for f in frames}) == 1


async def test_exact_and_whitespace_resends_add_nothing(store: Store) -> None:
    session = await new_session(store)
    text = "The migration ran:\n\n- users: 12 rows\n- orders: 40 rows"
    frames = await feed(
        store,
        [
            reply(session, text),
            reply(session, text),
            reply(session, text.replace("\n\n", "\n ") + "  "),
        ],
    )
    assert len(frames) == 1
    await store.end_turn(session)
    assert texts(await store.all_rows(session)) == [("agent", text)]


async def test_a_short_id_less_resend_is_kept_twice(store: Store) -> None:
    session = await new_session(store)
    await feed(
        store,
        [
            reply(session, "Thanks, done"),
            update(session, sessionUpdate="tool_call", toolCallId="t", title="x"),
            reply(session, "Thanks, done"),
        ],
    )
    await store.end_turn(session)
    assert [r.text for r in await store.all_rows(session) if r.kind == "agent"] == [
        "Thanks, done"
    ] * 2


async def test_a_whole_block_recap_folds_into_the_row_it_repeats(store: Store) -> None:
    session = await new_session(store)
    first = "I read the config and the port is 8080 in every environment."
    view = ViewTranscript()
    await feed(
        store,
        [
            *(reply(session, p) for p in pieces(first)),
            update(session, sessionUpdate="tool_call", toolCallId="t", title="Read"),
            reply(session, first.replace(" ", "  ")),  # the recap, whitespace changed
            update(session, sessionUpdate="tool_call_update", toolCallId="t", status="completed"),
            reply(session, first + " Nothing else to change."),
        ],  # the recap, extended
        view,
    )
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert texts(rows) == [("agent", first + " Nothing else to change."), ("tool", "")]
    assert texts(view) == texts(rows)


@pytest.mark.parametrize(
    ("between", "folds"), [(RECAP_LOOKBACK - 1, True), (RECAP_LOOKBACK, False)]
)
async def test_a_recap_looks_back_only_recap_lookback_rows(
    store: Store, between: int, folds: bool
) -> None:
    session = await new_session(store)
    first = "The build passes on every platform we support today."
    others = [
        (thought if n % 2 == 0 else reply)(session, f"Message number {n} says something else.")
        for n in range(between)
    ]
    await store.begin_turn(session, "go")
    await feed(
        store,
        [
            reply(session, first),
            *others,
            update(session, sessionUpdate="tool_call", toolCallId="t", title="Run"),
            reply(session, first),  # the recap, `between` text rows after the row it repeats
        ],
    )
    await store.end_turn(session)
    copies = [r.text for r in await store.all_rows(session) if r.text == first]
    assert copies == ([first] if folds else [first, first])


async def test_message_ids_key_rows_across_tool_calls_and_kinds(store: Store) -> None:
    session = await new_session(store)
    await store.begin_turn(session, "go")
    await feed(
        store,
        [
            thought(session, "plan: ", "m1"),
            reply(session, "Working", "m1"),  # same id, other kind: another row
            thought(session, "read first", "m1"),
            update(session, sessionUpdate="tool_call", toolCallId="t", title="Read"),
            reply(session, " on it.", "m1"),  # one id is one message, even after a tool call
            reply(session, "(aside)"),  # id-less from an id-sending agent: its own row
            reply(session, " Done.", "m1"),
        ],
    )
    await store.end_turn(session)
    await store.begin_turn(session, "again")
    await feed(store, [reply(session, "New turn, same id.", "m1")])
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert texts(rows) == [
        ("user", "go"),
        ("thought", "plan: read first"),
        ("agent", "Working on it. Done."),
        ("tool", ""),
        ("agent", "(aside)"),
        ("user", "again"),
        ("agent", "New turn, same id."),
    ]
    assert rows[2].key == "agent:1:m1"
    assert rows[6].key == "agent:2:m1"


async def test_replies_separated_only_by_a_tool_call_are_two_rows(store: Store) -> None:
    session = await new_session(store)
    await feed(
        store,
        [
            reply(session, "Let me look."),
            update(session, sessionUpdate="tool_call", toolCallId="a", title="ls"),
            reply(session, "Found it."),
            update(session, sessionUpdate="tool_call", toolCallId="b", title="cat"),
            reply(session, "Bye."),
        ],
    )
    await store.end_turn(session)
    assert [r.text for r in await store.all_rows(session) if r.kind == "agent"] == [
        "Let me look.",
        "Found it.",
        "Bye.",
    ]


async def test_session_metadata_in_the_middle_of_a_reply_does_not_cut_it(store: Store) -> None:
    """codex-acp sends its command list in the middle of its first reply."""
    session = await new_session(store)
    await feed(
        store,
        [
            reply(session, "| Algorithm | Avera"),
            update(session, sessionUpdate="available_commands_update", availableCommands=[]),
            reply(session, "ge | Worst |"),
            update(session, sessionUpdate="usage_update", used=1, size=2),
            update(session, sessionUpdate="current_mode_update", currentModeId="ask"),
            update(session, sessionUpdate="config_option_update", configOptions=[]),
            update(session, sessionUpdate="session_info_update", title="Sorting"),
            reply(session, "\n"),
        ],
    )
    await store.end_turn(session)
    assert [(r.kind, r.text) for r in await store.all_rows(session)] == [
        ("agent", "| Algorithm | Average | Worst |\n")
    ]


async def test_empty_chunks_open_no_bubble(store: Store) -> None:
    session = await new_session(store)
    frames = await feed(store, [reply(session, ""), thought(session, ""), reply(session, "")])
    assert frames == []
    await store.end_turn(session)
    assert await store.all_rows(session) == []


async def test_tool_update_before_start_and_repeated_start(store: Store) -> None:
    session = await new_session(store)
    frames = await feed(
        store,
        [
            update(
                session,
                sessionUpdate="tool_call_update",
                toolCallId="g1",
                status="in_progress",
                content=[{"type": "content", "content": {"type": "text", "text": "a"}}],
            ),
            update(
                session, sessionUpdate="tool_call", toolCallId="g1", title="Shell", kind="execute"
            ),
            update(
                session, sessionUpdate="tool_call", toolCallId="g1", title="Shell", kind="execute"
            ),
            update(
                session,
                sessionUpdate="tool_call_update",
                toolCallId="g1",
                status="completed",
                content=[{"type": "content", "content": {"type": "text", "text": "b"}}],
            ),
        ],
    )
    assert len({f.key for f in frames}) == 1
    assert not any(f.delta for f in frames)
    rows = await store.all_rows(session)
    assert len(rows) == 1
    assert rows[0].payload == {
        "toolCallId": "g1",
        "status": "completed",
        "title": "Shell",
        "kind": "execute",
        "content": [{"type": "content", "content": {"type": "text", "text": "b"}}],
    }


async def test_a_tool_row_evicted_from_memory_is_found_again(store: Store) -> None:
    session = await new_session(store)
    for number in range(NAMED_ROWS + 5):
        await store.apply(
            update(session, sessionUpdate="tool_call", toolCallId=f"c{number}", title=f"t{number}")
        )
    await store.apply(
        update(session, sessionUpdate="tool_call_update", toolCallId="c0", status="failed")
    )
    rows = await store.all_rows(session)
    assert len(rows) == NAMED_ROWS + 5
    assert rows[0].payload == {"toolCallId": "c0", "title": "t0", "status": "failed"}


async def test_a_plan_replaces_its_turns_plan_in_place(store: Store) -> None:
    session = await new_session(store)
    step = {"content": "write tests", "priority": "high"}
    await store.begin_turn(session, "plan it")
    await store.apply(
        update(session, sessionUpdate="plan", entries=[{**step, "status": "pending"}])
    )
    await store.apply(reply(session, "working"))
    await store.apply(
        update(session, sessionUpdate="plan", entries=[{**step, "status": "completed"}])
    )
    await store.begin_turn(session, "next")
    await store.apply(update(session, sessionUpdate="plan", entries=[]))
    rows = [r for r in await store.all_rows(session) if r.kind == "plan"]
    assert [r.payload for r in rows] == [
        {"entries": [{**step, "status": "completed"}], "revision": 2, "author": "agent"},
        {"entries": [], "revision": 3, "author": "agent"},
    ]
    assert [r.turn for r in rows] == [1, 2]


async def test_cockpits_plan_takes_the_next_revision_and_leaves_the_reply_open(
    tmp_path: Path,
) -> None:
    store = await Store.open(tmp_path / "cockpit.db")
    session = await new_session(store)
    await store.begin_turn(session, "plan it")
    await store.apply(update(session, sessionUpdate="plan", entries=[{"content": "a"}]))
    await store.apply(reply(session, "first half "))
    steps = [{"content": "a", "status": "completed"}]
    written = {"entries": steps, "author": "tool", "explanation": "one done"}
    await store.apply(Chunk(session, "plan", data=written, from_cockpit=True))
    await store.apply(reply(session, "second half"))
    await store.close()

    store = await Store.open(tmp_path / "cockpit.db")  # the revision goes on after a restart
    await store.apply(Chunk(session, "plan", data={"entries": [], "author": "user"},
                            from_cockpit=True))  # fmt: skip
    rows = await store.all_rows(session)
    await store.close()
    assert [r.text for r in rows if r.kind == "agent"] == ["first half second half"]
    plans = [r.payload for r in rows if r.kind == "plan"]
    assert plans == [{"entries": [], "revision": 3, "author": "user"}]  # one row a turn
    assert next(r for r in rows if r.kind == "plan").turn == 1


async def test_session_metadata_updates_are_stored_on_the_session(store: Store) -> None:
    session = await new_session(store)
    await store.update_session(session, modes={"currentModeId": "default", "availableModes": []})
    await feed(
        store,
        [
            update(session, sessionUpdate="current_mode_update", currentModeId="plan"),
            update(
                session,
                sessionUpdate="config_option_update",
                configOptions=[{"id": "model", "currentValue": "x"}],
            ),
            update(
                session,
                sessionUpdate="available_commands_update",
                availableCommands=[{"name": "init", "description": "d"}],
            ),
            update(session, sessionUpdate="usage_update", used=10, size=100),
            update(
                session,
                sessionUpdate="usage_update",
                used=20,
                size=100,
                cost={"amount": 0.5, "currency": "USD"},
            ),
            update(session, sessionUpdate="session_info_update", title="Fix the build"),
        ],
    )
    record = await store.get_session(session)
    assert record is not None
    assert record.modes == {"currentModeId": "plan", "availableModes": []}
    assert record.config_options == ({"id": "model", "currentValue": "x"},)
    assert record.commands == ({"name": "init", "description": "d"},)
    assert record.usage == {"used": 20, "size": 100, "cost": {"amount": 0.5, "currency": "USD"}}
    assert record.title == "Fix the build"
    assert await store.all_rows(session) == []


async def test_metadata_of_the_wrong_shape_changes_nothing_and_breaks_no_flush(
    store: Store,
) -> None:
    """A mode id that is an object could not be bound: the flush failed, and with it the
    reply written in the same transaction."""
    session = await new_session(store)
    await store.update_session(session, modes={"currentModeId": "default", "availableModes": []})
    await feed(
        store,
        [
            update(session, sessionUpdate="available_commands_update", availableCommands=[]),
            reply(session, "kept"),
            update(session, sessionUpdate="current_mode_update", currentModeId={"x": 1}),
            update(session, sessionUpdate="config_option_update", configOptions={"a": 1}),
            update(session, sessionUpdate="available_commands_update", availableCommands="x"),
        ],
    )
    await store.flush()
    record = await store.get_session(session)
    assert record is not None
    assert record.modes == {"currentModeId": "default", "availableModes": []}
    assert record.config_options is None or record.config_options == ()
    assert record.commands == ()
    assert texts(await store.all_rows(session)) == [("agent", "kept")]


async def test_the_open_message_waits_in_memory_but_reads_see_it(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await store.begin_turn(session, "hi")
        await feed(store, [reply(session, p) for p in pieces("streaming along nicely", 4)])
        on_disk = stored(path, "SELECT kind, text FROM messages ORDER BY seq")
        assert on_disk == [("user", "hi")]  # the prompt is durable, the open reply not yet
        page = await store.page_before(session)
        assert texts(page.rows) == [("user", "hi"), ("agent", "streaming along nicely")]
        await store.apply(update(session, sessionUpdate="tool_call", toolCallId="t", title="x"))
        assert stored(path, "SELECT text FROM messages WHERE kind = 'agent'") == [
            ("streaming along nicely",)
        ]


async def test_the_open_message_is_written_when_the_turn_ends(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await store.begin_turn(session, "hi")
        await feed(store, [reply(session, p) for p in pieces("the whole answer, at last", 4)])
        assert stored(path, "SELECT kind, text FROM messages ORDER BY seq") == [("user", "hi")]
        await store.end_turn(session)
        # Read by another connection before close(): the turn's end wrote it, not shutdown.
        assert stored(path, "SELECT kind, text FROM messages ORDER BY seq") == [
            ("user", "hi"),
            ("agent", "the whole answer, at last"),
        ]


async def test_a_tool_call_receiving_updates_is_written_when_it_seals(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await feed(
            store,
            [
                update(
                    session,
                    sessionUpdate="tool_call",
                    toolCallId="t",
                    title="Run",
                    status="pending",
                ),
                update(
                    session, sessionUpdate="tool_call_update", toolCallId="t", status="in_progress"
                ),
            ],
        )
        assert stored(path, "SELECT kind FROM messages") == []
        page = await store.page_before(session)
        assert [r.payload for r in page.rows] == [
            {"toolCallId": "t", "title": "Run", "status": "in_progress"}
        ]
        await feed(
            store,
            [
                update(
                    session, sessionUpdate="tool_call_update", toolCallId="t", status="completed"
                ),
                reply(session, "It ran."),
            ],
        )
        assert stored(path, "SELECT kind, payload FROM messages") == [
            ("tool", '{"toolCallId":"t","title":"Run","status":"completed"}')
        ]


async def test_the_flush_timer_writes_the_open_message(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=0.02) as store:
        session = await new_session(store)
        await feed(store, [reply(session, "partial answer")])
        for _ in range(100):
            await asyncio.sleep(0.01)
            if stored(path, "SELECT text FROM messages"):
                break
        assert stored(path, "SELECT text FROM messages") == [("partial answer",)]
        await feed(store, [reply(session, ", continued")])
    assert stored(path, "SELECT text FROM messages") == [("partial answer, continued",)]


async def test_durable_facts_are_committed_before_apply_returns(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await store.apply(
            note(
                session,
                "permission",
                "Allowed once: Write notes.md",
                optionId="allow",
                toolCallId="t",
            )
        )
        await store.apply(note(session, "error", "The agent exited with code 3"))
        assert stored(path, "SELECT kind, text, payload FROM messages ORDER BY seq") == [
            ("permission", "Allowed once: Write notes.md", '{"optionId":"allow","toolCallId":"t"}'),
            ("error", "The agent exited with code 3", None),
        ]


async def test_reads_do_not_wait_for_a_writer(store: Store) -> None:
    session = await new_session(store)
    await store.apply(note(session, "notice", "hello"))
    blocker = sqlite3.connect(store.path, timeout=0)
    blocker.execute("BEGIN IMMEDIATE")
    blocker.execute("UPDATE sessions SET title = 'locked' WHERE id = ?", (session,))
    try:
        page = await asyncio.wait_for(store.page_before(session), timeout=1)
        assert texts(page.rows) == [("notice", "hello")]
    finally:
        blocker.rollback()
        blocker.close()


async def test_seq_and_turn_continue_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path) as store:
        session = await new_session(store)
        await store.begin_turn(session, "one")
        await store.apply(reply(session, "first answer"))
    async with await Store.open(path) as store:
        turn, frames = await store.begin_turn(session, "two")
        await store.apply(reply(session, "second answer"))
        await store.end_turn(session)
        rows = await store.all_rows(session)
    assert turn == 2
    assert frames[0].seq == 3
    assert [(r.seq, r.turn, r.text) for r in rows] == [
        (1, 1, "one"),
        (2, 1, "first answer"),
        (3, 2, "two"),
        (4, 2, "second answer"),
    ]


async def test_replay_after_restart_is_dropped_when_the_transcript_is_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path) as store:
        session = await new_session(store)
        await store.begin_turn(session, "what is 2+2?")
        await feed(store, [reply(session, p) for p in pieces("It is 4.", 3)])
        await store.end_turn(session)
    async with await Store.open(path) as store:
        window = await store.begin_replay(session)
        assert not window.keep
        replayed = await feed(
            store,
            [
                update(
                    session,
                    sessionUpdate="user_message_chunk",
                    content={"type": "text", "text": "what is 2+2?"},
                ),
                reply(session, "It is 4."),
                update(session, sessionUpdate="tool_call", toolCallId="old", title="x"),
                update(session, sessionUpdate="current_mode_update", currentModeId="plan"),
            ],
        )
        await store.end_replay(session)
        assert replayed == []
        await store.apply(reply(session, "A live line after the load."))
        rows = await store.all_rows(session)
        record = await store.get_session(session)
    assert texts(rows) == [
        ("user", "what is 2+2?"),
        ("agent", "It is 4."),
        ("agent", "A live line after the load."),
    ]
    assert record is not None
    assert record.modes == {"currentModeId": "plan"}


async def test_replay_is_kept_when_the_store_holds_nothing(store: Store) -> None:
    session = await new_session(store)
    window = await store.begin_replay(session)
    assert window.keep
    user = "user_message_chunk"
    await feed(
        store,
        [
            update(session, sessionUpdate=user, content={"type": "text", "text": "first question"}),
            reply(session, "first "),
            reply(session, "answer"),
            update(session, sessionUpdate=user, content={"type": "text", "text": "second "}),
            update(session, sessionUpdate=user, content={"type": "text", "text": "question"}),
            thought(session, "hmm"),
            reply(session, "second answer"),
        ],
    )
    await store.end_replay(session)
    turn, _ = await store.begin_turn(session, "third question")
    rows = await store.all_rows(session)
    assert [(r.turn, r.kind, r.text) for r in rows] == [
        (1, "user", "first question"),
        (1, "agent", "first answer"),
        (2, "user", "second question"),
        (2, "thought", "hmm"),
        (2, "agent", "second answer"),
        (3, "user", "third question"),
    ]
    assert turn == 3


async def test_a_kept_replay_with_message_ids_opens_a_turn_per_user_message(
    store: Store,
) -> None:
    session = await new_session(store)
    await store.begin_replay(session)
    user = "user_message_chunk"
    await feed(
        store,
        [
            update(
                session, sessionUpdate=user, content={"type": "text", "text": "one"}, messageId="u1"
            ),
            reply(session, "first answer", message_id="a1"),
            update(
                session, sessionUpdate=user, content={"type": "text", "text": "tw"}, messageId="u2"
            ),
            update(
                session, sessionUpdate=user, content={"type": "text", "text": "o"}, messageId="u2"
            ),
            reply(session, "second answer", message_id="a2"),
        ],
    )
    await store.end_replay(session)
    rows = await store.all_rows(session)
    assert [(r.turn, r.kind, r.text) for r in rows] == [
        (1, "user", "one"),
        (1, "agent", "first answer"),
        (2, "user", "two"),
        (2, "agent", "second answer"),
    ]


async def test_sessions_are_created_listed_updated_and_deleted(store: Store) -> None:
    first = await store.create_session(agent="demo", command=["python", "demo.py"], cwd="/src")
    second = await store.create_session(
        agent="gemini", command=["gemini", "--acp"], cwd="/w", title="T"
    )
    assert first.id != second.id
    assert first.command == ("python", "demo.py")
    assert first.status == "idle"
    await store.update_session(
        first.id, title="Renamed", status="working", agent_session_id="abc", unread=True
    )
    record = await store.get_session(first.id)
    assert record is not None
    assert (record.title, record.status, record.agent_session_id, record.unread) == (
        "Renamed",
        "working",
        "abc",
        True,
    )
    # Reading a session or writing a draft is not activity: the session does not get newer.
    await store.update_session(first.id, unread=False, draft="half a prompt")
    again = await store.get_session(first.id)
    assert again is not None
    assert (again.unread, again.draft, again.updated) == (False, "half a prompt", record.updated)
    assert [s.id for s in await store.list_sessions()] == [first.id, second.id]
    await store.apply(note(second.id, "notice", "x"))
    assert next(s.id for s in await store.list_sessions()) == second.id  # newest activity first
    await store.delete_session(second.id)
    assert await store.get_session(second.id) is None
    assert await store.all_rows(second.id) == []
    with pytest.raises(UnknownSession):
        await store.update_session("nope", title="x")
    with pytest.raises(UnknownSession):
        await store.apply(reply("nope", "x"))
    with pytest.raises(ValueError, match="not session fields"):
        await store.update_session(first.id, colour="red")


async def test_a_mark_is_seen_at_once_and_written_with_the_next_flush(tmp_path: Path) -> None:
    """Marks (read, draft) are written without waiting and never make a session newer."""
    store = await Store.open(tmp_path / "c.db")
    record = await store.create_session(agent="demo", command=["demo"], cwd="/w")
    store.mark(record.id, unread=True, draft="one")
    store.mark(record.id, draft="two")  # the later mark wins
    seen = await store.get_session(record.id)
    assert seen is not None
    assert (seen.unread, seen.draft, seen.updated) == (True, "two", record.updated)
    with pytest.raises(ValueError, match="not marks"):
        store.mark(record.id, title="x")
    store.mark(record.id, unread=False)
    await store.close()
    again = await Store.open(tmp_path / "c.db")
    reopened = await again.get_session(record.id)
    await again.close()
    assert reopened is not None
    assert (reopened.unread, reopened.draft) == (False, "two")


async def test_eight_sessions_streaming_at_once_lose_nothing(store: Store) -> None:
    sessions = [await new_session(store, f"a{i}") for i in range(8)]
    texts_sent = {s: markdown_reply(random.Random(i), 3000) for i, s in enumerate(sessions)}
    views = {s: ViewTranscript() for s in sessions}

    async def stream(session: str) -> None:
        for piece in pieces(texts_sent[session], 4):
            for frame in await store.apply(reply(session, piece)):
                views[session].apply(frame)
            await asyncio.sleep(0)
        await store.end_turn(session)

    await asyncio.gather(*(stream(s) for s in sessions))
    for session in sessions:
        rows = await store.all_rows(session)
        assert texts(rows) == [("agent", texts_sent[session])]
        assert texts(views[session]) == texts(rows)


async def test_a_page_read_cancelled_anywhere_leaves_the_reader_usable(store: Store) -> None:
    """Ctrl+Down twice in a row cancelled a page read inside its read transaction, and every
    later read failed ("cannot start a transaction within a transaction")."""
    session = await new_session(store)
    await feed(store, [note(session, "notice", f"row {n}") for n in range(300)])
    for steps in range(40):
        read = asyncio.ensure_future(store.page_before(session))
        for _ in range(steps):
            await asyncio.sleep(0)
        read.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await read
        page = await store.page_before(session, max_rows=5)
        assert [r.text for r in page.rows] == [f"row {n}" for n in range(295, 300)]
        assert len((await store.rows_after(session, 0, max_rows=3)).rows) == 3


async def test_a_write_cancelled_anywhere_commits_and_what_follows_is_committed(
    tmp_path: Path,
) -> None:
    """A prompt's task cancelled by a delete cut a write between its BEGIN and its COMMIT:
    the writer stayed inside that transaction, every later single-statement write went
    into it uncommitted (unseen by reads, lost on exit: the monkey's live view longer
    than its stored row), and every later transaction failed."""
    path = tmp_path / "c.db"
    store = await Store.open(path)
    try:
        kept = await new_session(store)
        for steps in range(12):
            doomed = await new_session(store)
            await store.begin_turn(doomed, "to delete")
            delete = asyncio.ensure_future(store.delete_session(doomed))  # two statements
            for _ in range(steps):
                await asyncio.sleep(0)
            delete.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await delete
            await feed(store, [note(kept, "notice", f"after {steps}")])
            await store.flush()
            with sqlite3.connect(path) as db:  # another connection sees only what commits
                seen = db.execute(
                    "SELECT text FROM messages WHERE session = ? ORDER BY seq DESC LIMIT 1",
                    (kept,),
                ).fetchone()
                gone = db.execute("SELECT 1 FROM sessions WHERE id = ?", (doomed,)).fetchone()
            db.close()
            assert seen == (f"after {steps}",), f"cancelled after {steps} steps"
            if steps:  # (cancelled before its first step, the delete never began)
                assert gone is None, "the delete whose caller was cancelled did not finish"
    finally:
        await store.close()


async def test_a_store_closed_under_a_cancelled_write_finishes_it_first(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    store = await Store.open(path)
    doomed = await new_session(store)
    await store.begin_turn(doomed, "to delete")
    delete = asyncio.ensure_future(store.delete_session(doomed))
    await asyncio.sleep(0)  # the write has begun
    delete.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await delete
    await store.close()  # had nothing of its own to write: it closed under the write
    with sqlite3.connect(path) as db:
        left = db.execute("SELECT COUNT(*) FROM messages WHERE session = ?", (doomed,)).fetchone()
    db.close()
    assert left == (0,)


async def test_a_deleted_session_is_never_written_again(store: Store) -> None:
    """The TUI deleted a session while a prompt for it was on its way: the rows written
    after the delete failed the foreign key at every flush."""
    session = await new_session(store)
    other = await new_session(store)
    late = await new_session(store)
    # A first write of `late` reads where it ends while the delete goes through.
    results = await asyncio.gather(
        store.apply(reply(late, "late")), store.delete_session(late), return_exceptions=True
    )
    assert results[1] is None
    await feed(store, [reply(session, "a reply that is still open")])
    await store.delete_session(session)
    with pytest.raises(UnknownSession):
        await store.apply(reply(session, "more"))
    with pytest.raises(UnknownSession):
        await store.begin_turn(session, "a prompt sent too late")
    await feed(store, [reply(other, "the other session goes on")])
    await store.flush()
    assert texts(await store.all_rows(other)) == [("agent", "the other session goes on")]
    assert await store.get_session(late) is None
    assert await store.all_rows(late) == []


async def test_a_session_that_cannot_be_written_does_not_hold_the_others_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    store = await Store.open(path, flush_interval=3600)
    try:
        broken, fine = await new_session(store), await new_session(store)
        await feed(store, [reply(broken, "lost with its session"), reply(fine, "kept")])
        with sqlite3.connect(path) as db:  # another program removes the session behind us
            db.execute("PRAGMA foreign_keys = OFF")
            db.execute("DELETE FROM sessions WHERE id = ?", (broken,))
        with pytest.raises(sqlite3.IntegrityError):
            await store.flush()
        with sqlite3.connect(path) as db:
            stored = db.execute("SELECT session, text FROM messages").fetchall()
        assert stored == [(fine, "kept")]
    finally:
        with contextlib.suppress(sqlite3.IntegrityError):
            await store.close()


async def test_a_chunk_that_waited_for_a_release_is_written_all_the_same(tmp_path: Path) -> None:
    """A session stopped while its agent's last chunks were still being applied: a chunk that
    waited for the release went into the fold the release had just let go of, and was
    shown but never written."""
    path = tmp_path / "c.db"
    store = await Store.open(path)
    view = ViewTranscript()
    session = await new_session(store)
    await feed(store, [reply(session, "the start of a reply, ")], view)
    await store._write_lock.acquire()  # a flush is under way
    release = asyncio.ensure_future(store.release(session))
    await asyncio.sleep(0.01)  # the release holds the session, waiting to write
    late = asyncio.ensure_future(store.apply(reply(session, "and its end")))
    await asyncio.sleep(0.01)
    store._write_lock.release()
    await release
    for frame in await late:
        view.apply(frame)
    await store.close()
    async with await Store.open(path) as reopened:
        rows = await reopened.all_rows(session)
    assert "".join(r.text for r in rows) == "the start of a reply, and its end"
    assert [(b.key, b.text) for b in view] == [(r.key, r.text) for r in rows]


async def test_a_session_created_while_pages_are_read_is_found_at_once(store: Store) -> None:
    """A read made while a page's read transaction was open saw the database as it was when
    the page began: a session just created was not there yet."""
    session = await new_session(store)
    await feed(store, [note(session, "notice", f"row {n}") for n in range(200)])

    async def create() -> str:
        await asyncio.sleep(0)
        return await new_session(store)

    for _ in range(20):
        results = await asyncio.gather(
            *(store.page_before(session, max_rows=50) for _ in range(4)), create()
        )
        created = results[-1]
        assert isinstance(created, str)
        assert await store.get_session(created) is not None
