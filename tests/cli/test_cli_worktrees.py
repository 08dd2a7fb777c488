"""`cockpit run --worktree` and `cockpit worktrees [--json]`, through the service and with
--local, on a real git repository: the demo agent's edit lands in the session's worktree,
the listing names it, and a folder in no repository is one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in
from tests.support.git_repos import git, make_repo


@pytest.mark.parametrize("mode", MODES)
def test_run_in_a_worktree_and_list_it(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    done = run_in(mode, cli_home, "run", "--yes", "--worktree", "--cwd", str(repo), "tools")
    assert done.returncode == 0, done.stderr
    assert not (repo / "demo-notes.md").exists()
    said = [line for line in done.stderr.splitlines() if "working in" in line]
    assert len(said) == 1 and "on branch cockpit/session-" in said[0]
    listed = run_in(mode, cli_home, "worktrees", "--json")
    assert listed.returncode == 0, listed.stderr
    (item,) = json.loads(listed.stdout)
    path = Path(item["path"])
    assert path.parent.parent == cli_home / "worktrees"
    assert (path / "demo-notes.md").exists()
    assert item["repo"] == str(repo) and item["base"] == "HEAD"
    assert item["branch"].startswith("cockpit/session-") and item["size"] > 0
    assert item["status"] == {
        "branch": item["branch"], "changed": 1, "ahead": 0, "behind": 0, "missing": False,
    }  # fmt: skip
    on_branch = run_in(
        mode, cli_home, "run", "--worktree", "--branch", "feature", "--cwd", str(repo), "hello"
    )
    assert on_branch.returncode == 0, on_branch.stderr
    lines = run_in(mode, cli_home, "worktrees").stdout.splitlines()
    assert len(lines) == 2 and "feature (from HEAD)" in lines[0] and "+1 ↑0 ↓0" in lines[1]


@pytest.mark.parametrize("mode", MODES)
def test_a_worktree_outside_a_repository_is_one_clear_line(
    mode: str, cli_home: Path, project_dir: Path
) -> None:
    done = run_in(mode, cli_home, "run", "--worktree", "--cwd", str(project_dir), "hello")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"cockpit: {project_dir} is not in a git repository: a worktree session needs one."
    )
    alone = run_in(mode, cli_home, "run", "--base", "main", "--cwd", str(project_dir), "hi")
    assert alone.returncode == 2
    assert alone.stderr.strip() == "cockpit: --base and --branch go with --worktree"
    assert run_in(mode, cli_home, "worktrees").stdout.startswith("No worktree sessions.")
