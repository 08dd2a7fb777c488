"""The new-session dialog's worktree choice as pure rules: which request the boxes make
(a new branch from the base, or the base branch itself), how the arrows step through the
bases, and the box's label for a long branch name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from cockpit.api import RepositoryInfo, WorktreeRequest
from cockpit.ui.screens.new_session import (
    BRANCH_CELLS,
    on_branch_label,
    stepped,
    worktree_request,
    worktree_rows,
)

names = st.text(st.characters(categories=("L", "N"), include_characters="-_/."), min_size=1).filter(
    lambda name: name != "HEAD"
)


def test_a_ticked_box_on_a_branch_works_on_that_branch() -> None:
    assert worktree_request("feature", True, False) == WorktreeRequest(branch="feature")
    assert worktree_request("feature", False, True) == WorktreeRequest(
        base="feature", carry_changes=True
    )
    assert worktree_request("feature", True, True) == WorktreeRequest(
        branch="feature", carry_changes=True
    )


@given(on_branch=st.booleans(), carry=st.booleans())
def test_head_always_makes_a_new_branch(on_branch: bool, carry: bool) -> None:
    """HEAD is the checkout's own: there is no branch of its to work on elsewhere."""
    request = worktree_request("HEAD", on_branch, carry)
    assert request.branch is None and request.base == "HEAD"


@given(values=st.lists(names, min_size=1, unique=True), start=st.integers(0, 50), delta=st.integers(-3, 3))  # fmt: skip
def test_the_arrows_step_within_the_bases_and_stop_at_either_end(
    values: list[str], start: int, delta: int
) -> None:
    current = values[min(start, len(values) - 1)]
    value = stepped(values, current, delta)
    assert value in values
    index = values.index(current) + delta
    assert value == values[max(0, min(index, len(values) - 1))]


def test_stepping_from_no_base_lands_on_the_first_and_none_without_bases() -> None:
    assert stepped(["HEAD", "main"], None, 1) == "HEAD"
    assert stepped([], "HEAD", 1) is None


@given(name=names)
def test_the_box_says_which_branch_and_cuts_a_long_name(name: str) -> None:
    label = on_branch_label(name)
    assert label.endswith(" itself (no new branch)")
    assert cell_len(label) <= BRANCH_CELLS + cell_len("Work on  itself (no new branch)")


def test_the_worktree_rows_a_repository_takes() -> None:
    assert worktree_rows(None) == 0
    assert worktree_rows(RepositoryInfo("/r", "main", False)) == 2
    assert worktree_rows(RepositoryInfo("/r", "main", True)) == 3
