"""`cockpit worktrees clean`, `cockpit archive` and `cockpit restore-worktree`, through the
service and with --local, on a real git repository: a dry run changes nothing, the cleanup
removes what loses nothing and keeps unmerged work unless forced, never without asking or
--yes, and an archived session comes back with its uncommitted file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in
from tests.support.git_repos import git, make_repo


def listing(mode: str, home: Path) -> dict[str, dict[str, object]]:
    done = run_in(mode, home, "worktrees", "--json")
    assert done.returncode == 0, done.stderr
    return {item["session"]: item for item in json.loads(done.stdout)}


@pytest.mark.parametrize("mode", MODES)
def test_clean_archive_and_restore(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    edited = run_in(mode, cli_home, "run", "--yes", "--worktree", "--cwd", str(repo), "tools")
    assert edited.returncode == 0, edited.stderr
    (dirty,) = listing(mode, cli_home)
    quiet = run_in(mode, cli_home, "run", "--worktree", "--cwd", str(repo), "hello")
    assert quiet.returncode == 0, quiet.stderr
    (clean,) = set(listing(mode, cli_home)) - {dirty}
    paths = {key: Path(str(item["path"])) for key, item in listing(mode, cli_home).items()}
    refs = git(repo, "for-each-ref")

    dry = run_in(mode, cli_home, "worktrees", "clean", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert any(line.startswith(dirty) and "unmerged: 1 uncommitted file" in line for line in lines)
    assert any(line.startswith(clean) and "unmerged" not in line for line in lines)
    assert lines[-2:] == [
        "1 with unmerged work stays: --force removes them too.",
        "Nothing was removed (--dry-run).",
    ]
    assert all(path.exists() for path in paths.values()) and git(repo, "for-each-ref") == refs

    asked = run_in(mode, cli_home, "worktrees", "clean")  # no terminal to ask on
    assert asked.returncode == 2
    assert asked.stderr.strip() == "cockpit: nothing was removed: --yes removes without asking."
    assert all(path.exists() for path in paths.values())

    done = run_in(mode, cli_home, "worktrees", "clean", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"Removed {clean}: the worktree {paths[clean]}" in done.stdout
    assert not paths[clean].exists() and paths[dirty].exists()
    assert set(listing(mode, cli_home)) == {dirty}

    archived = run_in(mode, cli_home, "archive", dirty[:6])
    assert archived.returncode == 0, archived.stderr
    assert archived.stdout.startswith(f"Archived {dirty}: its worktree is removed")
    assert not paths[dirty].exists()
    assert "(archived)" in run_in(mode, cli_home, "worktrees").stdout
    again = run_in(mode, cli_home, "archive", dirty)
    assert (again.returncode, again.stderr.strip()) == (
        2, f"cockpit: Session {dirty} is archived already.",
    )  # fmt: skip
    restored = run_in(mode, cli_home, "restore-worktree", dirty)
    assert restored.returncode == 0, restored.stderr
    assert (paths[dirty] / "demo-notes.md").exists()
    unknown = run_in(mode, cli_home, "restore-worktree", "zzzz")
    assert unknown.returncode == 2 and unknown.stderr.startswith("cockpit: ")
