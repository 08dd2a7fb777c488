"""The checkpoints' pure rules: a checkpoint's message read back as written, a checkpoint
found by number or commit, the checkpoints around a turn, a restore's plan and refusal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import Checkpoint, RestorePlan
from cockpit.engine.checkpoints.rules import (
    DiffEntry,
    checkpoint_message,
    find_checkpoint,
    read_checkpoint,
    read_checkpoints,
    read_raw_diff,
    ref_name,
    restore_done,
    restore_plan,
    restore_refusal,
    turn_bounds,
)

SHA = "a" * 40


@given(
    st.integers(1, 10**6),
    st.integers(0, 10**5),
    st.sampled_from(["start", "end", "restore"]),
    st.floats(0, 2e9).map(lambda t: round(t, 3)),
    st.integers(0, 10**5),
)
def test_a_checkpoint_reads_back_as_it_was_written(
    number: int, turn: int, phase: str, time: float, changed: int
) -> None:
    message = checkpoint_message(turn, phase, time, changed)
    read = read_checkpoint(ref_name("s1", number), SHA, message, "s1")
    assert read == Checkpoint(str(number), turn, phase, SHA, time, changed)


def test_refs_that_are_not_cockpits_are_left_out() -> None:
    message = checkpoint_message(1, "start", 1.0, 0)
    assert read_checkpoint("refs/cockpit/s2/1", SHA, message, "s1") is None
    assert read_checkpoint("refs/cockpit/s1/tip", SHA, message, "s1") is None
    assert read_checkpoint("refs/cockpit/s1/1", SHA, "a commit by hand", "s1") is None
    assert read_checkpoint("refs/cockpit/s1/1", SHA, message.replace("start", "x"), "s1") is None


def test_for_each_ref_output_is_read_in_the_order_made() -> None:
    def line(n: int, turn: int, phase: str) -> bytes:
        return f"refs/cockpit/s1/{n}\0{SHA}\0{checkpoint_message(turn, phase, 1.0, 0)}\0\n".encode()

    output = line(10, 5, "end") + line(2, 1, "end") + line(9, 5, "start")
    assert [c.id for c in read_checkpoints(output, "s1")] == ["2", "9", "10"]


CHECKPOINTS = [
    Checkpoint("1", 1, "start", "1" * 40, 1.0, 0),
    Checkpoint("2", 1, "end", "2" * 40, 2.0, 1),
    Checkpoint("3", 2, "start", "3" * 40, 3.0, 1),
    Checkpoint("4", 2, "restore", "34" * 20, 4.0, 1),
    Checkpoint("5", 2, "end", "5" * 40, 5.0, 0),
]


def test_a_checkpoint_is_found_by_number_or_the_start_of_its_commit() -> None:
    assert find_checkpoint(CHECKPOINTS, "2").id == "2"
    assert find_checkpoint(CHECKPOINTS, "#4").id == "4"
    assert find_checkpoint(CHECKPOINTS, "5555").id == "5"
    with pytest.raises(KeyError, match="several"):
        find_checkpoint([*CHECKPOINTS, Checkpoint("6", 3, "start", "5" * 40, 6, 0)], "5555")
    with pytest.raises(KeyError, match="give its number \\(1-5\\)"):
        find_checkpoint(CHECKPOINTS, "9")
    with pytest.raises(KeyError, match="no checkpoint yet"):
        find_checkpoint([], "1")


def test_a_turn_is_bounded_by_its_start_and_end_and_what_came_before() -> None:
    first = turn_bounds(CHECKPOINTS, 1)
    assert (first.before, first.start, first.end) == (None, CHECKPOINTS[0], CHECKPOINTS[1])
    second = turn_bounds(CHECKPOINTS, 2)
    assert [second.before, second.start, second.end] == [*CHECKPOINTS[1:3], CHECKPOINTS[4]]
    running = turn_bounds(CHECKPOINTS[:3], 2)
    assert running.end is None
    assert turn_bounds(CHECKPOINTS, 7).start is None


def test_a_raw_diff_is_read() -> None:
    output = (
        b":100644 100644 " + b"1" * 40 + b" " + b"2" * 40 + b" M\0a b.txt\0"
        b":000000 100755 " + b"0" * 40 + b" " + b"3" * 40 + b" A\0run.sh\0"
    )
    assert read_raw_diff(output) == [
        DiffEntry("M", "100644", "100644", "1" * 40, "2" * 40, "a b.txt"),
        DiffEntry("A", "000000", "100755", "0" * 40, "3" * 40, "run.sh"),
    ]


def entry(status: str, path: str, mode: str = "100644") -> DiffEntry:
    return DiffEntry(status, mode, mode, SHA, SHA, path)


def test_a_restore_overwrites_creates_deletes_and_keeps_ignored_files() -> None:
    diff = [
        entry("M", "changed.py"),
        entry("T", "now-a-link"),
        entry("A", "gone.py"),
        entry("A", ".env"),
        entry("D", "new.py"),
        entry("M", "vendor/lib", "160000"),
    ]
    plan = restore_plan("3", diff, on_disk=lambda path: path == ".env")
    assert plan == RestorePlan(
        "3", ("changed.py", "now-a-link"), ("gone.py",), ("new.py",), (".env",), None
    )
    said = restore_done(plan, CHECKPOINTS[-1])
    assert said == (
        "Put the files back as checkpoint 3 holds them (2 overwritten, 1 written back, "
        "1 deleted, 1 ignored and kept). Restore checkpoint 5 to undo this."
    )


def test_a_restore_is_refused_while_anything_runs() -> None:
    assert restore_refusal(False, False, False) is None
    assert "A turn is running" in str(restore_refusal(True, True, True))
    assert "A command the agent started" in str(restore_refusal(False, True, True))
    assert "Your command" in str(restore_refusal(False, False, True))
