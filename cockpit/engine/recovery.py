"""What the engine finds when it opens: sessions Cockpit left in the middle of a turn (it
was closed, or it crashed) get a row saying their reply may be cut short, and commands the
user ran that it left running say they were cut, and what is left of them is killed."""

from __future__ import annotations

import asyncio

from cockpit.api import Status
from cockpit.engine.processes import end_marked_group
from cockpit.engine.unread import Unread
from store import Row, SessionBusy, note, shell_run
from store.store import Store

CUT_BY_A_STOP = (
    "Cockpit stopped while this turn was running (it was closed or it crashed): the agent "
    "stopped too, and the reply above may be cut short."
)
"""The row a session gets when Cockpit finds it was stopped in the middle of a turn."""

MID_TURN = (Status.WORKING, Status.WAITING, Status.CANCELLING)
"""The stored states of a session whose turn was running."""


async def recover(store: Store, unread: Unread) -> None:
    """Read what the store says of each session: which are unread, and which Cockpit
    left in the middle of a turn (closed, or crashed): each of those gets a row saying
    its reply may be cut short, unless another Cockpit is running it now."""
    for record in await store.list_sessions():
        if record.unread:
            unread.restore(record.id)
        if record.status not in MID_TURN:
            continue
        try:
            await store.claim(record.id)
        except SessionBusy:
            continue  # another Cockpit runs it: its turn may well be going on
        try:
            await store.apply(note(record.id, "notice", CUT_BY_A_STOP))
            await store.update_session(record.id, status=Status.CLOSED)
        finally:
            await store.release(record.id)
        unread.set_unread(record.id, True)
    for row in await store.running_commands():
        await _cut(store, row)


async def _cut(store: Store, row: Row) -> None:
    """A command's row that still says it runs, from a Cockpit that stopped (crashed) while
    it ran: its output stays, it says how it ended is not known, and what is left of it
    (its process group, when its leader is still the process it started) is killed. Not in a session
    another Cockpit runs now: there it may well be running."""
    try:
        await store.claim(row.session)
    except SessionBusy:
        return
    try:
        payload = {**(row.payload or {}), "state": "cut"}
        await asyncio.to_thread(end_marked_group, payload.pop("group", None))
        run_id = row.key.removeprefix("shell:")
        await store.apply(shell_run(row.session, run_id, row.text, **payload))
    finally:
        await store.release(row.session)
