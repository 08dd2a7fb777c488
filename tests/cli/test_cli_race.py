"""`cockpit race` through the service and with --local, on a real repository with real demo
agents: the comparison printed (and as JSON), nothing merged without --keep, and --keep
merging the one kept into the checkout and archiving the others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in
from tests.support.git_repos import git, make_repo

TEST = "test -f demo-notes.md"


@pytest.mark.parametrize("mode", MODES)
def test_a_race_compares_and_keeps_one(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": f'test = "{TEST}"\n'})
    assert run_in(mode, cli_home, "approve", "--yes", "--cwd", str(repo)).returncode == 0
    race = ["race", "--agents", "demo,demo", "--yes", "--cwd", str(repo)]
    compared = run_in(mode, cli_home, *race, "--json", "tools")
    assert compared.returncode == 0, compared.stderr
    standings = json.loads(compared.stdout)
    assert [(c["agent"], c["files"], c["test"]) for c in standings] == [
        ("demo", 1, "passed"), ("demo", 1, "passed"),
    ]  # fmt: skip
    assert not (repo / "demo-notes.md").exists(), "nothing merged without --keep"
    done = [line for line in compared.stderr.splitlines() if " is done in " in line]
    assert len(done) == 2 and all(line.endswith(": 1 file +6 -0, test passed") for line in done)

    kept = run_in(mode, cli_home, *race, "--keep", "2", "tools")
    assert kept.returncode == 0, kept.stderr
    lines = kept.stdout.splitlines()
    assert lines[0].split() == ["#", "agent", "session", "status", "files", "lines", "test",
                                "time", "cost"]  # fmt: skip
    assert [line.split()[7] for line in lines[1:3]] == ["passed", "passed"]
    assert (repo / "demo-notes.md").exists() and git(repo, "status", "--porcelain") == ""
    assert any("rchived" in line for line in lines[3:]), kept.stdout


@pytest.mark.parametrize("mode", MODES)
def test_a_race_that_cannot_run_says_why(mode: str, cli_home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    unknown = run_in(mode, cli_home, "race", "--agents", "demo,nope", "--cwd", str(repo), "x")
    assert unknown.returncode == 2 and "nope" in unknown.stderr
    outside = run_in(mode, cli_home, "race", "--agents", "demo", "--cwd", str(tmp_path), "x")
    assert outside.returncode == 2 and "not in a git repository" in outside.stderr
    ambiguous = run_in(mode, cli_home, "race", "--agents", "demo,demo", "--yes", "--keep",
                       "demo", "--cwd", str(repo), "tools")  # fmt: skip
    assert ambiguous.returncode == 2 and "names no one contender" in ambiguous.stderr
