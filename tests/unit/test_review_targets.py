"""The pure rules of reviewing by line and by turn: stepping through a diff's changed
lines and hunks, a comment on one line (a removed one says so), the marks a diff shows
beside chosen and commented lines, and the views (every change, then each turn)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import Checkpoint, FileChange
from cockpit.text.review import ReviewComment, review_prompt
from cockpit.ui.changes_rules import (
    CHOSEN,
    NOTED,
    Target,
    comment_on,
    file_line,
    hunk_words,
    hunks,
    marks,
    step_hunk,
    step_line,
    step_view,
    turns_of,
    view_words,
)

OLD = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
NEW = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
CHANGE = FileChange("x.py", "modified", OLD, NEW)


def test_a_hunk_holds_its_changed_lines_in_order() -> None:
    first, second = hunks(CHANGE)
    assert [(line.kind, line.text) for line in first.lines] == [("removed", "b"), ("added", "B")]
    assert (second.first, second.last, [line.text for line in second.lines]) == (11, 11, ["k"])


def test_lines_step_across_hunks_and_round_the_end() -> None:
    sizes = [2, 1]
    assert step_line(sizes, Target(0), 1) == Target(0, 0)
    assert step_line(sizes, Target(1), -1) == Target(1, 0)
    assert step_line(sizes, Target(0, 1), 1) == Target(1, 0)
    assert step_line(sizes, Target(1, 0), 1) == Target(0, 0)
    assert step_line(sizes, Target(0, 0), -1) == Target(1, 0)
    assert step_line([], Target(3, 2), 1) == Target()
    assert step_hunk(2, Target(1, 0), 1) == Target(0) and step_hunk(0, Target(4), 1) == Target()


@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=5),
    st.integers(0, 6),
    st.one_of(st.none(), st.integers(0, 6)),
    st.sampled_from([1, -1]),
)
def test_a_step_always_lands_on_a_line(
    sizes: list[int], hunk: int, line: int | None, step: int
) -> None:
    landed = step_line(sizes, Target(hunk, line), step)
    assert landed.line is not None
    assert 0 <= landed.hunk < len(sizes) and 0 <= landed.line < sizes[landed.hunk]


def test_a_comment_goes_on_a_line_a_hunk_or_the_file() -> None:
    removed = comment_on(CHANGE, Target(0, 0), "why?", turn=3)
    assert (removed.first, removed.last, removed.quote, removed.removed, removed.turn) == (
        2, 2, "b", True, 3,
    )  # fmt: skip
    added = comment_on(CHANGE, Target(0, 1), "ok")
    assert (added.first, added.quote, added.removed, added.turn) == (2, "B", False, None)
    whole = comment_on(CHANGE, Target(1), "new line")
    assert (whole.first, whole.last, whole.quote) == (11, 11, "k")
    assert comment_on(CHANGE, None, "all").first is None
    assert review_prompt([removed, added]) == (
        "review:\n- x.py:2 (removed line, turn 3): why?\n  > b\n- x.py:2: ok\n  > B"
    )


def test_the_status_line_names_the_line_or_the_hunk() -> None:
    assert hunk_words(CHANGE, Target(0, 0), 2) == "hunk 1/2 · line 2 (removed) · b"
    assert hunk_words(CHANGE, Target(0), 2) == "hunk 1/2 · line 2 · B"
    assert hunk_words(None, Target(), 0, 4) == "Turn 4 changed nothing."


def test_marks_show_the_chosen_lines_and_the_commented_ones_of_this_view() -> None:
    first, second = hunks(CHANGE)
    comments = [
        ReviewComment("x.py", 2, 2, "on B", "B"),
        ReviewComment("x.py", 11, 11, "other view", "k", turn=1),
        ReviewComment("y.py", 2, 2, "other file", "B"),
    ]
    assert marks(CHANGE, Target(1), comments, None) == {
        first.lines[1]: NOTED,
        second.lines[0]: CHOSEN,
    }
    assert marks(CHANGE, Target(0), comments, 1) == {
        first.lines[0]: CHOSEN,
        first.lines[1]: CHOSEN,
        second.lines[0]: NOTED,
    }
    on_hunk = comment_on(CHANGE, Target(0), "the hunk")
    assert on_hunk.hunk and marks(CHANGE, Target(1, 0), [on_hunk], None) == {
        first.lines[0]: NOTED,
        first.lines[1]: NOTED,
        second.lines[0]: CHOSEN,
    }


def test_views_go_round_every_change_then_each_turn() -> None:
    def checkpoint(id: str, turn: int, phase: str) -> Checkpoint:
        return Checkpoint(id, turn, phase, "c0ffee", 0.0, 0)

    made = [checkpoint("1", 1, "start"), checkpoint("2", 1, "end"), checkpoint("3", 3, "start")]
    turns = turns_of([*made, checkpoint("4", 3, "restore")])
    assert turns == [1, 3]
    assert [step_view(turns, view, 1) for view in (None, 1, 3)] == [1, 3, None]
    assert step_view(turns, None, -1) == 3 and step_view([], None, 1) is None
    assert view_words(None, turns) == "All changes against the base · t: each of its 2 turn(s)"
    assert view_words(3, turns) == "Turn 3 (2 of 2) · t: next view"


def test_a_change_between_turns_says_so() -> None:
    change = FileChange("n.md", "added", None, "hi\n", outside=True)
    assert file_line(change, 2, outside=True) == "A n.md  +1 -0  (between turns)  ✎2"
