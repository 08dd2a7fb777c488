"""`cockpit changes`, `commit`, `merge`, `discard` and `push`, through the service and with
--local, on a real git repository and the demo agent's edit: what changed, a commit, a
merge (after a dry run) into the user's checkout, a merge refused into a dirty checkout, a
discard that asks first and is undone, a push to a bare remote, and clear lines for what
cannot be done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in
from tests.support.git_repos import git, make_repo


def session_of(mode: str, home: Path, repo: Path) -> tuple[str, Path]:
    """A worktree session whose demo agent wrote `demo-notes.md`: its id and worktree."""
    done = run_in(mode, home, "run", "--yes", "--worktree", "--cwd", str(repo), "tools")
    assert done.returncode == 0, done.stderr
    (item,) = json.loads(run_in(mode, home, "worktrees", "--json").stdout)
    return item["session"], Path(item["path"])


@pytest.mark.parametrize("mode", MODES)
def test_changes_commit_and_merge(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    session, path = session_of(mode, cli_home, repo)
    listed = run_in(mode, cli_home, "changes", session[:6])
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("A demo-notes.md  +")
    (change,) = json.loads(run_in(mode, cli_home, "changes", session, "--json").stdout)
    assert change["status"] == "added" and change["new_text"]
    patch = run_in(mode, cli_home, "changes", session, "--patch").stdout
    assert patch.startswith("--- /dev/null\n+++ b/demo-notes.md\n@@")
    early = run_in(mode, cli_home, "merge", session)
    assert early.returncode == 4 and "uncommitted change" in early.stderr
    done = run_in(mode, cli_home, "commit", session, "-m", "Notes from the demo")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Committed on cockpit/session-")
    assert git(path, "log", "-1", "--format=%s") == "Notes from the demo"
    (repo / "README.md").write_text("the user's edit\n")
    dirty = run_in(mode, cli_home, "merge", session)
    assert dirty.returncode == 4 and "has uncommitted changes: nothing was changed" in dirty.stderr
    git(repo, "checkout", "-q", "README.md")
    plan = run_in(mode, cli_home, "merge", session, "--dry-run")
    assert plan.stdout.strip() == "It would merge into main as a fast-forward."
    assert not (repo / "demo-notes.md").exists()
    merged = run_in(mode, cli_home, "merge", session, "--ff-only")
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.startswith("Merged into main as a fast-forward: ")
    assert (repo / "demo-notes.md").exists()


@pytest.mark.parametrize("mode", MODES)
def test_discard_asks_and_is_undone_and_push(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    session, path = session_of(mode, cli_home, repo)
    asked = run_in(mode, cli_home, "discard", session)
    assert asked.returncode == 2 and "Run it again with --yes" in asked.stderr
    assert (path / "demo-notes.md").exists()
    gone = run_in(mode, cli_home, "discard", session, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert "--undo" in gone.stdout and not (path / "demo-notes.md").exists()
    back = run_in(mode, cli_home, "discard", session, "--undo")
    assert back.returncode == 0 and (path / "demo-notes.md").exists()
    missing = run_in(mode, cli_home, "push", session)
    assert missing.returncode == 4
    assert missing.stderr.startswith("cockpit: The repository has no remote 'origin'")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    run_in(mode, cli_home, "commit", session, "-m", "Notes")
    pushed = run_in(mode, cli_home, "push", session)
    assert pushed.returncode == 0, pushed.stderr
    branch = git(path, "branch", "--show-current")
    assert git(bare, "rev-parse", branch) == git(path, "rev-parse", "HEAD")


@pytest.mark.parametrize("mode", MODES)
def test_a_plain_session_or_an_unknown_one_is_one_clear_line(
    mode: str, cli_home: Path, project_dir: Path
) -> None:
    assert run_in(mode, cli_home, "run", "--cwd", str(project_dir), "hello").returncode == 0
    session = run_in(mode, cli_home, "ls", "--json")
    (record,) = json.loads(session.stdout)
    plain = run_in(mode, cli_home, "changes", record["id"])
    assert plain.returncode == 4
    assert plain.stderr.strip() == f"cockpit: Session {record['id']} has no worktree of its own."
    unknown = run_in(mode, cli_home, "merge", "zzzz")
    assert unknown.returncode == 2 and unknown.stderr.startswith("cockpit: ")
    assert "Traceback" not in unknown.stderr
