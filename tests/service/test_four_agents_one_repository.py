"""Issue 34's "done when", from the command line, through the service and over a real SSH
connection to it: four agents work in one repository at once, each in its own worktree,
touching neither each other's files nor the user's checkout; the user sees what each turn
of each changed, puts one back, comments, merges one and archives the rest; the cleanup
then leaves nothing the user did not choose to keep (the archived sessions' branches and
kept work); what holds nothing to lose goes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.service.test_service_bridge import ssh_to, sshd  # noqa: F401 (a fixture)
from tests.support.git_repos import git, make_repo
from tests.support.service_helpers import cockpit, services_stopped

Cockpit = Callable[..., subprocess.CompletedProcess[str]]


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(params=["service", "ssh"])
def reach(request: pytest.FixtureRequest, service_home: Path, tmp_path: Path) -> Iterator[Cockpit]:
    """`cockpit ARGS` reaching the service of `service_home`: directly, or through
    `--via` an ssh to the test's own sshd that runs the bridge there."""
    if request.param == "service":
        yield lambda *args: cockpit(*args, home=service_home)
        return
    port, key = request.getfixturevalue("sshd")
    remote = ["env", f"COCKPIT_HOME={service_home}", sys.executable, "-m", "cockpit"]
    via = shlex.join([*ssh_to(port, key), "127.0.0.1", *remote, "service", "--stdio"])
    own = tmp_path / "client-home"
    own.mkdir()
    with services_stopped(own):
        yield lambda *args: cockpit("--via", via, *args, home=own)


def test_four_agents_one_repository(reach: Cockpit, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.txt": "v1\n"})
    raced = ok(reach("race", "--agents", "demo,demo,demo,demo", "--yes", "--json",
                     "--cwd", str(repo), "tools"))  # fmt: skip
    sessions = [c["session"] for c in json.loads(raced.stdout)]
    assert len(sessions) == 4
    listed = {item["session"]: item for item in json.loads(ok(reach("worktrees", "--json")).stdout)}
    paths = [Path(listed[s]["path"]) for s in sessions]
    assert len(set(paths)) == 4
    for path in paths:  # each wrote its own notes in its own worktree
        assert (path / "demo-notes.md").exists()
    assert git(repo, "status", "--porcelain") == "" and not (repo / "demo-notes.md").exists()

    # What each turn of each changed.
    for session in sessions:
        changed = ok(reach("changes", session)).stdout.splitlines()
        assert [line.split()[:2] for line in changed] == [["A", "demo-notes.md"]]
        checkpoints = json.loads(ok(reach("checkpoints", session, "--json")).stdout)
        assert [(c["turn"], c["phase"]) for c in checkpoints] == [(1, "start"), (1, "end")]

    # Put the first one back as it was before its turn; the others keep theirs.
    first, second, *rest = sessions
    ok(reach("restore", first, "1", "--yes"))
    assert not (paths[0] / "demo-notes.md").exists()
    assert all((path / "demo-notes.md").exists() for path in paths[1:])

    # Comment on the second: one prompt, as the review sends it.
    review = "review: demo-notes.md:1 say what the notes are for"
    ok(reach("send", second, review, "--wait"))
    shown = json.loads(ok(reach("show", second, "--json")).stdout)
    prompts = [row["text"] for row in shown["rows"] if row["kind"] == "user"]
    assert prompts == ["tools", review]

    # Merge the second, archive the rest, clean up what is merged.
    ok(reach("commit", second, "-m", "the notes"))
    ok(reach("merge", second))
    assert (repo / "demo-notes.md").exists() and git(repo, "status", "--porcelain") == ""
    for session in [first, *rest]:
        ok(reach("archive", session))
    ok(reach("worktrees", "clean", "--merged", "--yes"))
    worktrees = git(repo, "worktree", "list", "--porcelain")
    assert worktrees.count("worktree ") == 1, worktrees  # the user's checkout alone
    # The merged one went, and the one put back (nothing of it was left to lose); the
    # archived ones with work stay, by choice, with their branches.
    kept = {item["session"] for item in json.loads(ok(reach("worktrees", "--json")).stdout)}
    assert kept == set(rest)
    branches = git(repo, "branch", "--format=%(refname:short)").splitlines()
    assert sorted(branches) == sorted(["main", *(listed[s]["branch"] for s in rest)])
    assert git(repo, "for-each-ref", "refs/cockpit/" + first) == ""
