"""Untrusted input: bad text, huge messages, unknown and malformed updates. Nothing crashes,
nothing already stored is lost."""

from __future__ import annotations

from store import Store, ViewTranscript, chunk_from_update
from store.paging import PAGE_BYTES
from tests.helpers import feed, new_session, pieces, reply, texts, update


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
    assert rows[1].payload["title"] == "bad \udcff title"


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
    assert [r.kind for r in rows] == ["agent", "notice", "notice", "notice", "notice", "agent"]
    assert "'brand_new_update'" in rows[1].text
    assert rows[1].payload == {"update": {"sessionUpdate": "brand_new_update", "payload": {"x": 1}}}
    assert "'malformed'" in rows[2].text
    assert rows[5].text == "[image image/png][a.py](file:///a.py)"
    assert len(frames) == 6


async def test_a_huge_unknown_update_is_kept_truncated(store: Store) -> None:
    session = await new_session(store)
    await feed(store, [update(session, sessionUpdate="mystery", blob="x" * 1_000_000)])
    (row,) = await store.all_rows(session)
    assert row.kind == "notice"
    assert row.payload is not None
    assert len(row.payload["truncated"]) == 64 * 1024
