"""Which session a name on the command line means: the start of an id, else a title."""

from __future__ import annotations

import pytest

from cockpit.engine.session_names import LISTED, session_named
from store import SessionRecord


def record(session_id: str, title: str | None) -> SessionRecord:
    return SessionRecord(
        session_id, "demo", ("demo",), "/p", title, "closed", None, 0.0, 0.0,
        None, None, None, None, None, False, "",
    )  # fmt: skip


SESSIONS = [
    record("a1b2c3d4", "Fix the greeting"),
    record("a1ff0000", "Fix the tests"),
    record("b7e90000", "Write the README"),
    record("c0de0000", None),
    record("d00d0000", "fix"),
]


def named(wanted: str) -> str:
    return session_named(SESSIONS, wanted).id


def test_the_start_of_an_id_comes_first() -> None:
    assert named("a1b") == "a1b2c3d4"
    assert named("b7e9") == "b7e90000"


def test_a_whole_title_then_the_start_of_one_case_aside() -> None:
    assert named("Write the README") == "b7e90000"
    assert named("write") == "b7e90000"
    assert named("Fix the g") == "a1b2c3d4"
    assert named("fix") == "d00d0000"  # its whole title, though two others start so


def test_a_name_that_fits_several_lists_them() -> None:
    with pytest.raises(KeyError) as raised:
        named("Fix the")
    assert raised.value.args[0] == (
        "2 sessions have a title starting 'Fix the'; name one by its id:\n"
        "  a1b2c3d4  Fix the greeting\n"
        "  a1ff0000  Fix the tests"
    )
    with pytest.raises(KeyError, match="2 sessions have an id starting 'a1'"):
        named("a1")


def test_a_name_that_fits_none_says_so() -> None:
    with pytest.raises(KeyError, match="no session with an id or a title starting 'zz'"):
        named("zz")


def test_a_long_list_is_cut_and_counted() -> None:
    many = [record(f"{n:08x}", f"task {n}") for n in range(LISTED + 5)]
    with pytest.raises(KeyError) as raised:
        session_named(many, "task")
    lines = raised.value.args[0].splitlines()
    assert len(lines) == LISTED + 2
    assert lines[-1] == "  …and 5 more (`cockpit ls` lists them)"


def test_a_title_is_shown_without_its_escape_sequences() -> None:
    sessions = [record("11110000", "x\x1b[31m red"), record("22220000", "x two")]
    with pytest.raises(KeyError) as raised:
        session_named(sessions, "x")
    assert "\x1b" not in raised.value.args[0]
