"""A writer that streams messages into a store until it is killed (see test_crash.py).

It reports on stdout, after the fact is durable: `SEALED key` once a message has been
sealed by the tool call that follows it, and `FLUSHED key length` after an explicit
flush of the open message. It never exits on its own.
"""

from __future__ import annotations

import asyncio
import random
import sys

from store import chunk_from_update
from store.store import Store
from store.workload import markdown_reply, text_update

SESSION = "crash"


def message(number: int) -> str:
    return markdown_reply(random.Random(number), 1200)


async def main(path: str) -> None:
    store = await Store.open(path, flush_interval=0.01)
    await store.create_session(agent="demo", command=["demo"], cwd="/", session_id=SESSION)
    number = 0
    while True:
        number += 1
        await store.begin_turn(SESSION, f"prompt {number}")
        text = message(number)
        key = None
        for index in range(0, len(text), 4):
            frames = await store.apply(
                chunk_from_update(
                    SESSION, text_update("agent_message_chunk", text[index : index + 4])
                )
            )
            key = frames[0].key if frames else key
            if index % 200 == 0:
                await store.flush()
                print(f"FLUSHED {key} {index + len(text[index : index + 4])}", flush=True)
            if index % 40 == 0:
                await asyncio.sleep(0.001)
        await store.apply(
            chunk_from_update(
                SESSION, {"sessionUpdate": "tool_call", "toolCallId": f"t{number}", "title": "x"}
            )
        )
        print(f"SEALED {key}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
