"""What a session's fold remembers between chunks, seen through the Store: a message
reloaded from the database, the open row a recap closes (and writes), the recap lookback
and the row a recap picks, a tool update after its row was written, a replay window a
prompt ends."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from store import Chunk, ViewTranscript, note, shell_run
from store.session_fold import NAMED_ROWS
from store.store import Store
from tests.support.helpers import feed, new_session, reply, texts, thought, update

LONG = "I read the config and the port is 8080 in every environment."


def tool_call(session: str, call_id: str, **fields: object) -> Chunk:
    return update(session, sessionUpdate="tool_call", toolCallId=call_id, **fields)


async def test_a_message_reloaded_from_the_database_keeps_folding(store: Store) -> None:
    # Past NAMED_ROWS other named rows the message leaves memory; the rules must then see
    # the reloaded row as it is (its length for frames, its words for re-sends).
    session = await new_session(store)
    view = ViewTranscript()
    chunks = [reply(session, "a  b c", "m1")]
    chunks += [tool_call(session, f"c{number}", title="Read") for number in range(NAMED_ROWS + 1)]
    chunks += [reply(session, "a b c", "m1"), reply(session, " d", "m1")]
    await feed(store, chunks, view)
    await store.end_turn(session)
    (row,) = [r for r in await store.all_rows(session) if r.kind == "agent"]
    assert row.text == "a  b c d"
    bubble = view.get(row.key)
    assert bubble is not None
    assert bubble.text == row.text


async def test_a_recap_closes_the_open_message_of_another_kind(store: Store) -> None:
    session = await new_session(store)
    await feed(
        store,
        [
            reply(session, LONG),
            tool_call(session, "t", title="Read"),
            thought(session, "Checking the staging file."),
            reply(session, LONG.replace(" ", "  ")),  # the recap: folds into the first reply
            thought(session, "Nothing differs."),
        ],
    )
    await store.end_turn(session)
    assert texts(await store.all_rows(session)) == [
        ("agent", LONG),
        ("tool", ""),
        ("thought", "Checking the staging file."),
        ("thought", "Nothing differs."),
    ]


async def test_the_row_a_recap_seals_is_written_at_once(tmp_path: Path) -> None:
    # Rule 6: a crash may lose part of the open message, never a sealed one.
    path = tmp_path / "c.db"
    async with await Store.open(path, flush_interval=3600) as store:
        session = await new_session(store)
        await feed(
            store,
            [
                reply(session, LONG),
                tool_call(session, "t", title="Read"),
                thought(session, "Checking the staging file."),
                reply(session, LONG.replace(" ", "  ")),  # the recap seals the thought
            ],
        )
        with sqlite3.connect(path) as db:
            written = db.execute("SELECT kind, text FROM messages ORDER BY seq").fetchall()
        assert written == [("agent", LONG), ("tool", ""), ("thought", "Checking the staging file.")]


async def test_a_message_returned_to_by_its_id_counts_once_in_the_recap_lookback(
    store: Store,
) -> None:
    # Seven rows in all, one of them returned to twice: the first is still recent.
    session = await new_session(store)
    chunks = [reply(session, LONG)]
    chunks += [
        thought(session, f"step {number} of the check", f"th{number}") for number in range(6)
    ]
    for number in range(2):
        chunks += [tool_call(session, f"t{number}", title="Run"), thought(session, " again", "th5")]
    chunks.append(reply(session, LONG.replace(" the ", "\nthe ")))
    await feed(store, chunks)
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert [r.text for r in rows if r.kind == "agent"] == [LONG]
    assert rows[6].text == "step 5 of the check again again"


async def test_a_recap_folds_into_the_newest_message_it_repeats(store: Store) -> None:
    # Both replies are contained in the recap; the newer one is the one it extends, and
    # the older one must not take in a copy of the newer.
    session = await new_session(store)
    await feed(
        store,
        [
            reply(session, LONG, "m1"),
            tool_call(session, "t", title="Lint"),
            reply(session, LONG + " Lint is clean.", "m2"),
            tool_call(session, "u", title="Docs"),
            reply(session, LONG + " Lint is clean. Docs build."),
        ],
    )
    await store.end_turn(session)
    assert [r.text for r in await store.all_rows(session) if r.kind == "agent"] == [
        LONG,
        LONG + " Lint is clean. Docs build.",
    ]


async def test_a_tool_update_after_its_row_was_written_is_written_too(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    async with await Store.open(path) as store:
        session = await new_session(store)
        await feed(
            store,
            [
                tool_call(session, "t", title="Run", status="pending", _meta={"a": 1}),
                reply(session, "It is running."),  # seals the tool row: written now
                update(
                    session,
                    sessionUpdate="tool_call_update",
                    toolCallId="t",
                    status="completed",
                    _meta={"a": 2},
                ),
            ],
        )
        await store.end_turn(session)
    async with await Store.open(path) as reopened:
        (tool,) = [r for r in await reopened.all_rows(session) if r.kind == "tool"]
    assert tool.payload == {
        "toolCallId": "t",
        "title": "Run",
        "status": "completed",
        "_meta": {"a": 2},
    }


async def test_a_prompt_ends_a_replay_window_left_open(store: Store) -> None:
    # A load that never finished (its request timed out) must not swallow the next turn.
    session = await new_session(store)
    await store.begin_turn(session, "first")
    await feed(store, [reply(session, "first answer")])
    await store.end_turn(session)
    window = await store.begin_replay(session)
    assert not window.keep
    await store.begin_turn(session, "second")
    await feed(store, [reply(session, "second answer")])
    await store.end_turn(session)
    assert texts(await store.all_rows(session)) == [
        ("user", "first"),
        ("agent", "first answer"),
        ("user", "second"),
        ("agent", "second answer"),
    ]


async def test_a_note_with_an_id_is_one_row_per_turn_replaced_in_place(tmp_path: Path) -> None:
    """A count that grows (refused requests past the listed ones) is one row, rewritten
    with each change, and read back as it last stood; the next turn has its own."""
    path = tmp_path / "c.db"
    view = ViewTranscript()
    async with await Store.open(path) as store:
        session = await new_session(store)
        for frame in (await store.begin_turn(session, "go"))[1]:
            view.apply(frame)
        counted = [
            note(session, "notice", f"and {n} more", message_id="m", count=n) for n in (1, 2)
        ]
        await feed(store, [reply(session, "It "), *counted, reply(session, "runs.")], view)
        await store.end_turn(session)
        rows = await store.all_rows(session)
        assert texts(rows) == [("user", "go"), ("agent", "It runs."), ("notice", "and 2 more")]
        assert rows[2].payload == {"count": 2}
        assert texts(view) == texts(rows)
    async with await Store.open(path) as store:  # the row is found again from the database
        await feed(store, [note(session, "notice", "and 3 more", message_id="m")], view)
        for frame in (await store.begin_turn(session, "again"))[1]:
            view.apply(frame)
        await feed(store, [note(session, "notice", "and 1 more", message_id="m")], view)
        await store.end_turn(session)
        rows = await store.all_rows(session)
    assert texts(rows)[2:] == [
        ("notice", "and 3 more"),
        ("user", "again"),
        ("notice", "and 1 more"),
    ]
    assert texts(view) == texts(rows)


async def test_a_users_command_mid_reply_leaves_the_reply_open(store: Store) -> None:
    """A `!command` row (Cockpit's, replaced as its output comes) between two pieces of
    the agent's reply: the reply stays one row, the command one row across turns."""
    session = await new_session(store)
    view = ViewTranscript()
    await store.begin_turn(session, "first")
    await feed(
        store,
        [
            reply(session, "The answer "),
            shell_run(session, "sh-1", "", command="ls", state="running"),
            reply(session, "goes on."),
            shell_run(session, "sh-1", "a.txt\n", command="ls", state="running"),
        ],
        view,
    )
    await store.end_turn(session)
    await store.begin_turn(session, "second")
    await feed(
        store, [shell_run(session, "sh-1", "a.txt\nb.txt\n", command="ls", state="exited")], view
    )
    rows = await store.all_rows(session)
    assert texts(rows) == [
        ("user", "first"),
        ("agent", "The answer goes on."),
        ("shell", "a.txt\nb.txt\n"),
        ("user", "second"),
    ]
    shell = rows[2]
    assert shell.key == "shell:sh-1" and shell.role == "user"
    assert shell.payload == {"command": "ls", "state": "exited"}
    assert texts(view) == texts(rows[1:3])  # the view saw the frames, not the prompts


async def test_a_users_command_is_never_taken_for_the_agents_replay(store: Store) -> None:
    session = await new_session(store)
    await store.begin_turn(session, "what is 2+2?")
    await feed(store, [reply(session, "It is 4.")])
    await store.end_turn(session)
    window = await store.begin_replay(session)
    assert not window.keep  # the agent's replay of what is stored is dropped...
    await feed(
        store,
        [
            reply(session, "It is 4."),
            shell_run(session, "sh-2", "done\n", command="make", state="exited"),
        ],
    )
    # ...but the user's command, run while the agent replays, is kept
    assert ("shell", "done\n") in texts(await store.all_rows(session))
