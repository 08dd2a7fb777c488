"""The pure rules of worktree sessions: a branch's name from a title (always one git
takes), where a worktree goes, a prefix git would refuse, the minimum git, and reading
git's counts."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cockpit.engine.worktrees.git import MIN_VERSION, too_old, version_of
from cockpit.engine.worktrees.naming import (
    SLUG_LENGTH,
    branch_name,
    prefix_problem,
    ref_problem,
    slug,
    worktree_path,
)
from cockpit.engine.worktrees.status import ahead_behind, count_changes


def test_a_branch_is_named_after_the_title_and_the_session() -> None:
    assert branch_name("Fix the tests!", "1a2b3c4d") == "cockpit/fix-the-tests-1a2b3c4d"
    assert branch_name("Élan vital: ça marche", "ab") == "cockpit/elan-vital-ca-marche-ab"
    assert branch_name(None, "ab") == "cockpit/session-ab"
    assert branch_name("日本語", "ab", "agents/") == "agents/session-ab"
    assert branch_name("x" * 99, "ab") == f"cockpit/{'x' * SLUG_LENGTH}-ab"


def git_takes(name: str) -> bool:
    done = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True)
    return done.returncode == 0


@settings(max_examples=60)
@given(st.none() | st.text(max_size=60), st.text("0123456789abcdef", min_size=8, max_size=8))
def test_every_branch_name_made_is_one_git_takes(title: str | None, session: str) -> None:
    name = branch_name(title, session)
    assert ref_problem(name) is None
    assert git_takes(name)
    assert len(slug(title)) <= SLUG_LENGTH and slug(title) == slug(slug(title))


@settings(max_examples=80)
@given(st.text(st.characters(codec="ascii", exclude_characters="\x00"), min_size=1, max_size=12))
def test_what_git_refuses_the_rule_refuses(name: str) -> None:
    if not git_takes(name):
        assert ref_problem(name) is not None


def test_a_prefix_git_would_refuse_is_told() -> None:
    assert prefix_problem("cockpit/") is None and prefix_problem("") is None
    assert prefix_problem("team/agents-") is None
    for bad in ("a b/", "../", "x..y/", "-x/", "a~/", "x.lock/"):
        assert prefix_problem(bad) is not None, bad


def test_a_worktree_goes_under_the_folder_by_repository_and_session(tmp_path: Path) -> None:
    folder = tmp_path / "worktrees"
    path = worktree_path(folder, Path("/home/u/My Project"), "Fix it", "1a2b3c4d")
    assert path == folder / "my-project" / "fix-it-1a2b3c4d"


def test_the_minimum_git_is_said() -> None:
    assert version_of("git version 2.39.5") == (2, 39)
    assert version_of("git version 2.25.0.windows.1") == (2, 25)
    assert version_of("nonsense") is None
    assert too_old(MIN_VERSION) is None and too_old((3, 0)) is None
    assert too_old((2, 17)) == (
        "Worktree sessions need git 2.25 or newer; this machine has git 2.17."
    )


def test_git_counts_are_read() -> None:
    assert count_changes(b"") == 0
    assert count_changes(b" M a.py\0?? b.py\0R  new.py\0old.py\0") == 3
    assert ahead_behind("1\t4") == (4, 1)
    assert ahead_behind("") == (0, 0)
