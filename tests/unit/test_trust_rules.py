"""The pure rules behind trust in daily use: where Ctrl+G goes, what quitting asks, what the
status line says of a failed start and of the tokens a turn used, which events make a
session unread, which dialog is already open, and where an export goes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import (
    AttentionEvent,
    FramesEvent,
    PermissionEvent,
    SessionEvent,
    Status,
    StatusEvent,
    read_usage,
)
from cockpit.engine.exports import EXPORTS, export_target, write_export
from cockpit.engine.unread import changed_session
from cockpit.ui.screen_rules import same_dialog
from cockpit.ui.screens.help import HelpScreen
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.session_states import RailState, next_needing, quit_question
from cockpit.ui.status_rules import turn_usage, turn_words, usage_text
from store import Frame
from tests.support.helpers import session_record, status_text

STATES = st.sampled_from(
    [RailState.NEEDS_YOU, RailState.UNREAD, RailState.WORKING, RailState.IDLE, RailState.CLOSED]
)


# -- Ctrl+G ------------------------------------------------------------------------------------


def test_ctrl_g_goes_to_a_question_first_then_to_unread_after_the_current_session() -> None:
    order = ["a", "b", "c", "d"]
    states = {
        "a": RailState.UNREAD,
        "b": RailState.IDLE,
        "c": RailState.NEEDS_YOU,
        "d": RailState.UNREAD,
    }
    assert next_needing(order, states, "b") == "c"
    assert next_needing(order, {**states, "c": RailState.IDLE}, "b") == "d"  # wraps past d
    assert next_needing(order, {**states, "c": RailState.IDLE, "d": RailState.IDLE}, "b") == "a"
    assert next_needing(order, {s: RailState.IDLE for s in order}, "b") is None
    assert next_needing(order, {"b": RailState.NEEDS_YOU}, "b") is None  # never itself


@given(
    st.lists(
        st.text(alphabet="abcdef", min_size=1, max_size=3), min_size=1, max_size=8, unique=True
    ),
    st.data(),
)
def test_ctrl_g_properties(order: list[str], data: st.DataObject) -> None:
    states = {session: data.draw(STATES) for session in order}
    current = data.draw(st.sampled_from([*order, None]))
    found = next_needing(order, states, current)
    others = [s for s in order if s != current]
    asking = [s for s in others if states[s] == RailState.NEEDS_YOU]
    unread = [s for s in others if states[s] == RailState.UNREAD]
    if asking:
        assert found in asking
    elif unread:
        assert found in unread
    else:
        assert found is None
    if found is not None:  # the first such after the current one, in rail order
        start = order.index(current) + 1 if current in order else 0
        rotated = order[start:] + order[:start]
        between = rotated[: rotated.index(found)]
        assert all(states[s] != states[found] for s in between if s != current)


# -- quitting ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("running", "waiting", "question"),
    [
        (0, 0, None),
        (1, 0, "Quit Cockpit? 1 turn is running; every agent stops with it."),
        (
            2,
            1,
            "Quit Cockpit? 2 turns are running and 1 question waits for you; every agent stops with it.",
        ),
        (0, 3, "Quit Cockpit? 3 questions wait for you; every agent stops with it."),
    ],
)
def test_quitting_asks_only_when_something_runs_or_waits(
    running: int, waiting: int, question: str | None
) -> None:
    assert quit_question(running, waiting) == question


# -- the status line -----------------------------------------------------------------------------


def test_a_session_whose_agent_could_not_start_says_why_not_stopped() -> None:
    record = session_record(status=Status.ERROR)
    assert turn_words(Status.CLOSED, 0, Status.ERROR, "") == (
        "the agent failed to start: a prompt tries again"
    )
    assert turn_words(Status.CLOSED, 0, Status.ERROR, "No such file: gemini") == (
        "the agent failed to start: No such file: gemini · a prompt tries again"
    )
    assert turn_words(Status.ERROR, 0, Status.ERROR, "The agent did not answer") == (
        "the agent failed to start: The agent did not answer · a prompt tries again"
    )
    assert turn_words(Status.EXITED, 0, Status.EXITED, "exited with code 3") == (
        "the agent exited with code 3 · a prompt restarts it"
    )
    assert status_text(record, "A", Status.CLOSED, 200).startswith("the agent failed to start")
    assert turn_words(Status.CANCELLING) == "cancelling the turn…"


def test_the_tokens_of_the_last_turn_show_as_the_agent_reported_them() -> None:
    usage = {
        "lastTurn": {
            "inputTokens": 71132,
            "outputTokens": 117,
            "cachedReadTokens": 47172,
            "cachedWriteTokens": 23840,
            "totalTokens": 71249,
        }
    }
    assert turn_usage(read_usage(usage)) == (
        "last turn: 71.1k in · 117 out · 47.2k cache read · 23.8k cache write",
        "71.1k in · 117 out",
    )
    assert turn_usage(read_usage({"lastTurn": {"inputTokens": 2_500_000}})) == (
        "last turn: 2.5M in",
        "2.5M in",
    )
    assert turn_usage(read_usage({"lastTurn": {"outputTokens": True}})) is None  # not a count
    assert turn_usage(read_usage({"used": 1, "size": 2})) is None
    assert turn_usage(read_usage(None)) is None
    record = session_record(usage={"used": 23843, "size": 200000, **usage})
    line = status_text(record, "Claude", Status.READY, 200)
    assert "23.8k/200k ctx" in line and "last turn: 71.1k in · 117 out" in line
    assert usage_text(read_usage({"used": 5, "size": 0})) is None


# -- unread ------------------------------------------------------------------------------------


def frame(kind: str) -> Frame:
    return Frame("s", f"{kind}:1", 1, kind, 1, "x", True, 1)


def test_what_makes_a_session_unread() -> None:
    assert changed_session(FramesEvent("s", (frame("agent"),))) == "s"
    assert changed_session(FramesEvent("s", (frame("user"), frame("tool")))) == "s"
    assert changed_session(FramesEvent("s", (frame("user"),))) is None  # the user's own words
    assert changed_session(FramesEvent("s", ())) is None
    assert changed_session(StatusEvent("s", Status.READY, "end_turn", turn_ended=True)) == "s"
    assert changed_session(StatusEvent("s", Status.EXITED, "exited with code 3")) == "s"
    assert changed_session(StatusEvent("s", Status.READY)) is None  # started, nothing happened
    assert changed_session(StatusEvent("s", Status.WORKING)) is None
    assert changed_session(SessionEvent("s")) is None
    assert changed_session(AttentionEvent("s", True)) is None


def test_permission_events_are_not_unread_but_questions() -> None:
    from cockpit.api import PermissionRequest

    request = PermissionRequest("r", "s", {"toolCallId": "t"}, ())
    assert changed_session(PermissionEvent(request, resolved=False)) is None


# -- dialogs -----------------------------------------------------------------------------------


def test_a_dialog_is_open_already_when_it_is_the_same_kind_and_question() -> None:
    assert same_dialog(HelpScreen(), HelpScreen())
    assert same_dialog(ConfirmScreen("Quit?"), ConfirmScreen("Quit?", "Quit", "Stay"))
    assert not same_dialog(ConfirmScreen("Quit?"), ConfirmScreen("Replace notes.md?"))
    assert not same_dialog(HelpScreen(), ConfirmScreen("Quit?"))


# -- exports -----------------------------------------------------------------------------------


def test_an_export_goes_to_cockpits_folder_unless_the_user_names_a_path(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert (
        export_target(data, "/work/p", "My notes", "ab12", "")
        == data / EXPORTS / "my-notes-ab12.md"
    )
    assert export_target(data, "/work/p", "My notes", "ab12", "out.md") == Path("/work/p/out.md")
    assert export_target(data, "/work/p", "x", "ab12", "/tmp/o.md") == Path("/tmp/o.md")


def test_writing_an_export_never_replaces_a_file_unless_told(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = data / EXPORTS / "t-1.md"
    write_export(path, "first", replace=False, data_dir=data)
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    with pytest.raises(FileExistsError):
        write_export(path, "second", replace=False, data_dir=data)
    assert path.read_text() == "first"
    write_export(path, "second", replace=True, data_dir=data)
    assert path.read_text() == "second"
    mine = tmp_path / "mine.md"
    mine.write_text("the user's")
    os.chmod(mine, 0o644)
    with pytest.raises(FileExistsError):
        write_export(mine, "x", replace=False, data_dir=data)
    assert mine.read_text() == "the user's"
