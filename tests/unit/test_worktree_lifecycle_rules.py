"""The pure rules of a worktree session's lifecycle: which branch goes with its worktree,
how a base and a refusal read, and what a stored archive mark says."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import CleanupItem, read_worktree_archive
from cockpit.engine.worktrees.cleanup import made_by_cockpit, refusal, short_base
from cockpit.engine.worktrees.naming import branch_name


@given(st.text(max_size=30), st.from_regex(r"[0-9a-f]{8}", fullmatch=True))
def test_a_branch_cockpit_named_goes_with_its_session(title: str, session: str) -> None:
    assert made_by_cockpit(branch_name(title, session), session)
    assert not made_by_cockpit("feature", session)
    assert not made_by_cockpit(branch_name(title, "0" * 8), session) or session == "0" * 8


def test_a_base_reads_as_the_user_calls_it() -> None:
    assert short_base("refs/heads/main") == "main"
    assert short_base("a" * 40) == "a" * 8
    assert short_base("release/1.0") == "release/1.0"


def item(unmerged: tuple[str, ...]) -> CleanupItem:
    return CleanupItem("s1", "t", "/w", "cockpit/t-s1", "main", 1, not unmerged, unmerged, 0.0)


def test_only_unmerged_work_is_refused_and_the_refusal_says_why() -> None:
    assert refusal(item(())) is None
    said = refusal(item(("2 commits not in main", "1 uncommitted file")))
    assert said == (
        "Kept cockpit/t-s1 (s1): 2 commits not in main, 1 uncommitted file; remove it"
        " anyway only with force (`--force`)."
    )


def test_an_archive_mark_is_read_or_ignored() -> None:
    mark = read_worktree_archive(
        {"worktree_archive": {"state": "archived", "folder": "/a", "patch": True, "at": 5}}
    )
    assert mark is not None and (mark.state, mark.folder, mark.patch, mark.at) == (
        "archived", "/a", True, 5.0,
    )  # fmt: skip
    assert read_worktree_archive({"worktree_archive": {"state": "other"}}) is None
    assert read_worktree_archive({"worktree_archive": "archived"}) is None
    assert read_worktree_archive(None) is None
    removed = read_worktree_archive({"worktree_archive": {"state": "removed", "at": True}})
    assert removed is not None and (removed.folder, removed.patch, removed.at) == ("", False, 0.0)
