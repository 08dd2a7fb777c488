"""Property test: what is not the agent's content stream never cuts a message in two.

Session metadata (commands, usage, mode, options, session info), Cockpit's own notices and
Cockpit's own updates of a tool call (a command's output) may arrive between any two chunks
of a message; the message still folds into one row, and the view rebuilt from the live
frames equals the stored rows. (codex-acp sends its command list in the middle of a reply.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from store import Chunk, Frame, ViewTranscript, note
from store.store import Store
from tests.store.test_fold_properties import Entry, expected_rows, feed_script, run, sessions
from tests.support.helpers import new_session, update

BACKGROUND_TOOL = "background"
"""A tool call made before the messages, whose output Cockpit keeps updating meanwhile."""

METADATA: tuple[dict[str, Any], ...] = (
    {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "review"}]},
    {"sessionUpdate": "usage_update", "used": 1200, "size": 200_000},
    {"sessionUpdate": "current_mode_update", "currentModeId": "plan"},
    {"sessionUpdate": "config_option_update", "configOptions": []},
    {"sessionUpdate": "session_info_update", "title": "Sorting algorithms"},
)


@st.composite
def interruptions(draw: st.DrawFn, session: str) -> list[tuple[Chunk, bool]]:
    """A few chunks that are not the agent's content; True for those that make a row."""
    made: list[tuple[Chunk, bool]] = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        what = draw(st.sampled_from(["metadata", "notice", "output"]))
        if what == "metadata":
            made.append((update(session, **draw(st.sampled_from(METADATA))), False))
        elif what == "notice":
            text = draw(st.sampled_from(["Ignored a malformed update.", "ⓘ the agent said"]))
            made.append((note(session, "notice", text), True))
        else:
            output = draw(st.text(alphabet="ab \n", max_size=8))
            data = {"toolCallId": BACKGROUND_TOOL, "terminalOutput": {"t1": {"output": output}}}
            made.append((Chunk(session, "tool_call_update", data=data, from_cockpit=True), False))
    return made


@settings(max_examples=60)
@given(sessions(), st.data())
def test_a_message_interrupted_by_anything_but_the_agent_stays_one_row(
    script: list[Entry], data: st.DataObject
) -> None:
    async def scenario(folder: str) -> None:
        async with await Store.open(Path(folder) / "c.db") as store:
            session = await new_session(store)
            frames = await store.apply(
                update(session, sessionUpdate="tool_call", toolCallId=BACKGROUND_TOOL, title="bg")
            )
            notices = 0

            async def meanwhile() -> list[Frame]:
                nonlocal notices
                made: list[Frame] = []
                for chunk, makes_row in data.draw(interruptions(session)):
                    made += await store.apply(chunk)
                    notices += makes_row
                return made

            frames += await feed_script(store, session, script, meanwhile)
            await store.end_turn(session)
            rows = await store.all_rows(session)
            texts = [(kind, text) for kind, text, _ in expected_rows(script) if kind != "tool"]
            assert [(r.kind, r.text) for r in rows if r.kind in ("agent", "thought")] == texts
            assert sum(r.kind == "notice" for r in rows) == notices
            view = ViewTranscript()
            for frame in frames:
                view.apply(frame)
            assert [(b.key, b.kind, b.text) for b in view] == [
                (r.key, r.kind, r.text) for r in rows
            ]

    with tempfile.TemporaryDirectory() as folder:
        run(scenario(folder))
