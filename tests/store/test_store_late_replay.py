"""History an agent replays after it answered `session/load`, through the store's chunk
path: the recorded gemini-cli capture on top of the transcript it reloads, the same with
nothing stored (rule 5 keeps the replay), every other capture played live right after a
replay of itself, and what a late replay's window holds and when it closes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from store import Chunk, Frame, Row, ViewTranscript, chunk_from_update, note
from store.store import Store
from store.workload import text_update
from tests.store.test_captures import CAPTURES, frames_of
from tests.support.full_disk import fill, free
from tests.support.helpers import feed, new_session, reply, texts, update
from tests.support.late_replay import (
    LATE_CAPTURE,
    LIVE_PROMPT,
    LIVE_REPLY,
    STORED_ROWS,
    TURNS,
    store_history,
)

USER = "user_message_chunk"


def user(session: str, text: str) -> Chunk:
    return chunk_from_update(session, text_update(USER, text))


def shown(rows: list[Row]) -> ViewTranscript:
    """A view that read these rows, as a client that opens the session does."""
    view = ViewTranscript()
    for row in rows:
        view.apply(Frame.read(row))
    return view


def late_part(records: list[dict[str, Any]]) -> set[int]:
    """The indexes of the updates the capture's agent sends in its burst right after the
    prompt that follows the load (the late part of its replay)."""
    prompt = next(i for i, r in enumerate(records) if r["frame"].get("method") == "session/prompt")
    burst: set[int] = set()
    last = records[prompt]["t"]
    for index in range(prompt + 1, len(records)):
        if records[index]["t"] - last > 0.25:
            break
        burst.add(index)
        last = records[index]["t"]
    return burst


async def play_reload(
    store: Store, session: str, view: ViewTranscript, *, prompt_first: bool, late_first: bool
) -> None:
    """Play the reload capture through the store as the engine drives it: the load's
    window opens before `session/load` and is answered with its response; the prompt is
    stored before the reload (`prompt_first`: a prompt that restarts the agent) or after
    it; `late_first` moves the late part of the replay before the prompt."""
    records = frames_of(LATE_CAPTURE)
    late = late_part(records)
    order = list(range(len(records)))
    if late_first:
        asked = next(i for i in order if records[i]["frame"].get("method") == "session/prompt")
        order = [i for i in order if i not in late]
        order[order.index(asked) : order.index(asked)] = sorted(late)

    async def prompt(text: str) -> None:
        _, frames = await store.begin_turn(session, text)
        for frame in frames:
            view.apply(frame)

    if prompt_first:
        await prompt(LIVE_PROMPT)
    load_id = None
    for index in order:
        frame = records[index]["frame"]
        method = frame.get("method")
        if method == "session/load":
            load_id = frame["id"]
            await store.begin_replay(session)
        elif method == "session/prompt" and not prompt_first:
            await prompt(LIVE_PROMPT)
        elif method == "session/update":
            await feed(store, [chunk_from_update(session, frame["params"]["update"])], view)
        elif record_id := frame.get("id"):
            if record_id == load_id and "result" in frame:
                await store.load_answered(session)
            elif "stopReason" in frame.get("result", {}):
                for kept in await store.end_turn(session):
                    view.apply(kept)


@pytest.mark.parametrize(
    ("prompt_first", "late_first"),
    [(True, False), (False, False), (False, True)],
    ids=["the-prompt-restarts-the-agent", "the-prompt-after-the-reload", "late-before-the-prompt"],
)
async def test_the_late_replay_of_the_capture_changes_nothing_stored(
    store: Store, prompt_first: bool, late_first: bool
) -> None:
    session = await new_session(store, "gemini")
    before = await store_history(store, session)
    view = shown(before)
    await play_reload(store, session, view, prompt_first=prompt_first, late_first=late_first)
    rows = await store.all_rows(session)
    assert rows[:STORED_ROWS] == before  # not a title, not a timestamp
    assert texts(rows[STORED_ROWS:]) == [("user", LIVE_PROMPT), ("agent", LIVE_REPLY)]
    assert [(b.key, b.text, b.payload) for b in view] == [(r.key, r.text, r.payload) for r in rows]


async def test_with_nothing_stored_the_replay_is_kept(store: Store) -> None:
    """Rule 5: the replay is the transcript. What arrives before the answer opens turns of
    its own; the late part, with nothing stored to tell it by, is kept as it comes."""
    session = await new_session(store, "gemini")
    view = ViewTranscript()
    await play_reload(store, session, view, prompt_first=False, late_first=False)
    rows = await store.all_rows(session)
    assert rows[0].kind == "user" and rows[0].text.startswith("<session_context>")
    assert rows[1].text == LIVE_PROMPT
    kept = "\n".join(row.text for row in rows)
    for prompt, reply_text, _ in TURNS:
        assert prompt in kept and reply_text in kept
    assert rows[-1].text.endswith(LIVE_REPLY)
    assert [(b.key, b.text) for b in view] == [(r.key, r.text) for r in rows]


def renamed(update_fields: dict[str, Any]) -> dict[str, Any]:
    """The update with its tool call id made new: an id names one call (rule 4), so a
    turn played again calls its tools under ids of its own."""
    if isinstance(update_fields.get("toolCallId"), str):
        return {**update_fields, "toolCallId": update_fields["toolCallId"] + "-again"}
    return update_fields


def replay_of(session: str, rows: list[Row]) -> list[Chunk]:
    """What an agent replays of these rows: each message whole, each tool call by its id."""
    kinds = {"user": USER, "agent": "agent_message_chunk", "thought": "agent_thought_chunk"}
    chunks = []
    for row in rows:
        if row.kind in kinds:
            chunks.append(chunk_from_update(session, text_update(kinds[row.kind], row.text)))
        elif row.kind == "tool" and row.payload is not None:
            chunks.append(update(session, **{**row.payload, "sessionUpdate": "tool_call"}))
    return chunks


async def play_live(
    store: Store, session: str, records: list[dict[str, Any]], view: ViewTranscript, again: bool
) -> None:
    for record in records:
        frame = record["frame"]
        if frame.get("method") == "session/prompt":
            text = "".join(block.get("text", "") for block in frame["params"]["prompt"])
            for live in (await store.begin_turn(session, text))[1]:
                view.apply(live)
        elif frame.get("method") == "session/update":
            fields = frame["params"]["update"]
            await feed(
                store, [chunk_from_update(session, renamed(fields) if again else fields)], view
            )
        elif "stopReason" in frame.get("result", {}):
            for kept in await store.end_turn(session):
                view.apply(kept)


@pytest.mark.parametrize("replayed", ["on-time", "late", "nothing"])
@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
async def test_a_turn_played_again_after_a_replay_of_itself_is_stored_whole(
    store: Store, capture: Path, replayed: str
) -> None:
    """Every recorded live session, played once, reloaded (its replay recited on time,
    late, or not at all) and played again as the live turn: a genuine live message equal
    to an old one is never taken for replay, and the reload changes no stored row."""
    records = frames_of(capture)
    session = await new_session(store, capture.stem)
    await play_live(store, session, records, ViewTranscript(), again=False)
    await store.flush()
    before = await store.all_rows(session)
    view = shown(before)
    await store.begin_replay(session)
    history = replay_of(session, before)
    if replayed == "on-time":
        await feed(store, history, view)
    await store.load_answered(session)
    prompt = next(r for r in records if r["frame"].get("method") == "session/prompt")
    for record in records:
        await play_live(store, session, [record], view, again=True)
        if record is prompt and replayed == "late":
            await feed(store, history, view)
    rows = await store.all_rows(session)
    assert rows[: len(before)] == before
    assert texts(rows[len(before) :]) == texts(before)
    assert [(b.key, b.text) for b in view] == [(r.key, r.text) for r in rows]


# The late window -----------------------------------------------------------------------------


async def reloaded(store: Store) -> str:
    """A session holding one turn, its agent reloaded and the load answered."""
    session = await new_session(store)
    await store.begin_turn(session, "what is in the config file?")
    await feed(store, [reply(session, "The port is 8080 in every environment.")])
    await store.end_turn(session)
    await store.begin_replay(session)
    await store.load_answered(session)
    return session


async def test_what_nothing_decided_is_dropped_once_a_stored_prompt_follows(store: Store) -> None:
    session = await reloaded(store)
    await store.begin_turn(session, "and the host?")
    view = ViewTranscript()
    await feed(store, [user(session, "<context>the agent's own</context>")], view)
    await feed(store, [user(session, "what is in the config file?")], view)
    await feed(store, [reply(session, "The port is 8080 in every environment.")], view)
    await feed(store, [reply(session, "The host is "), reply(session, "localhost.")], view)
    assert await store.end_turn(session) == []
    rows = await store.all_rows(session)
    assert texts(rows)[2:] == [("user", "and the host?"), ("agent", "The host is localhost.")]
    assert [b.text for b in view] == ["The host is localhost."]


async def test_what_nothing_decided_is_kept_when_live_content_follows(store: Store) -> None:
    session = await reloaded(store)
    await store.begin_turn(session, "and the host?")
    view = ViewTranscript()
    await feed(store, [user(session, "a message of the agent's own")], view)
    await feed(store, [reply(session, "The host is localhost.")], view)
    rows = await store.all_rows(session)
    assert texts(rows)[2:] == [
        ("user", "and the host?"),
        ("user", "a message of the agent's own"),
        ("agent", "The host is localhost."),
    ]
    assert [b.text for b in view] == [r.text for r in rows[3:]]


async def test_the_turn_after_the_load_ends_the_window_and_keeps_what_it_held(
    store: Store,
) -> None:
    session = await reloaded(store)
    await store.begin_turn(session, "anything?")
    view = ViewTranscript()
    await feed(store, [user(session, "an aside of the agent's")], view)
    assert list(view) == []
    for frame in await store.end_turn(session):
        view.apply(frame)
    rows = await store.all_rows(session)
    assert texts(rows)[2:] == [("user", "anything?"), ("user", "an aside of the agent's")]
    assert [b.text for b in view] == ["an aside of the agent's"]
    # The window is closed: the next turn's content is live whatever it says.
    await store.begin_turn(session, "again")
    await feed(store, [user(session, "what is in the config file?")])
    assert (await store.all_rows(session))[-1].text == "what is in the config file?"


async def test_a_store_closed_in_the_window_keeps_what_it_held(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "c.db") as store:
        session = await reloaded(store)
        await feed(store, [user(session, "an aside of the agent's")])
    async with await Store.open(tmp_path / "c.db") as store:
        assert texts(await store.all_rows(session))[-1] == ("user", "an aside of the agent's")


async def test_a_released_session_keeps_what_the_window_held(store: Store) -> None:
    session = await reloaded(store)
    await feed(store, [user(session, "an aside of the agent's")])
    await store.release(session)
    assert texts(await store.all_rows(session))[-1] == ("user", "an aside of the agent's")


async def test_cockpits_own_rows_pass_a_late_window(store: Store) -> None:
    session = await reloaded(store)
    await store.apply(note(session, "notice", "Reconnected."))
    await feed(store, [user(session, "what is in the config file?")])
    rows = await store.all_rows(session)
    assert texts(rows)[-1] == ("notice", "Reconnected.")


async def test_a_tool_call_replayed_late_changes_nothing_and_a_new_one_is_live(
    store: Store,
) -> None:
    session = await new_session(store)
    await store.begin_turn(session, "run the tests please")
    await feed(
        store,
        [
            update(session, sessionUpdate="tool_call", toolCallId="t1", title="pytest -q"),
            update(session, sessionUpdate="tool_call_update", toolCallId="t1", status="completed"),
        ],
    )
    await store.end_turn(session)
    before = await store.all_rows(session)
    await store.begin_replay(session)
    await store.load_answered(session)
    await store.begin_turn(session, "again")
    await feed(
        store,
        [
            user(session, "run the tests please"),
            update(session, sessionUpdate="tool_call", toolCallId="t1", title="Shell"),
            update(session, sessionUpdate="tool_call", toolCallId="t2", title="pytest -x"),
        ],
    )
    await store.end_turn(session)
    rows = await store.all_rows(session)
    assert rows[:2] == before
    assert [(r.kind, r.payload and r.payload.get("title")) for r in rows[2:]] == [
        ("user", None),
        ("tool", "pytest -x"),
    ]


async def test_a_reload_while_the_disk_is_full_tells_the_replay_by_what_waits_unwritten(
    tmp_path: Path,
) -> None:
    """The last reply could not be written (the disk is full) and waits in memory: the
    reload neither fails on it nor takes its late replay for a new reply."""
    store = await Store.open(tmp_path / "c.db", flush_interval=3600)
    answer = "The port is 8080 in every environment. " * 400
    try:
        session = await new_session(store)
        await store.begin_turn(session, "what is in the config file?")
        await fill(store)
        await feed(store, [reply(session, answer)])
        with pytest.raises(sqlite3.OperationalError):
            await store.end_turn(session)
        await store.begin_replay(session)
        await store.load_answered(session)
        await store.begin_turn(session, "and the host?")
        await feed(store, [user(session, "what is in the config file?"), reply(session, answer)])
        await feed(store, [reply(session, "The host is localhost.")])
        await free(store)
        await store.end_turn(session)
        await store.flush()
        assert texts(await store.all_rows(session)) == [
            ("user", "what is in the config file?"),
            ("agent", answer),
            ("user", "and the host?"),
            ("agent", "The host is localhost."),
        ]
    finally:
        await free(store)
        await store.close()
