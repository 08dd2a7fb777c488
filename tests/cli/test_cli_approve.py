"""`cockpit approve` and `cockpit run --worktree` in a repository whose `.cockpit.toml` asks
for a setup, through the service and with --local: not approved, it is not run and the run
says so; approved (after reading it whole), it runs in the new worktree and the prompt
waits for it; a repository's file never approves itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in
from tests.support.git_repos import make_repo

SETUP = 'sleep 1; echo "port $COCKPIT_PORT" > setup.txt'


@pytest.mark.parametrize("mode", MODES)
def test_a_setup_runs_once_approved_and_the_prompt_waits_for_it(
    mode: str, cli_home: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {".cockpit.toml": f"setup = '{SETUP}'\n"})
    first = run_in(mode, cli_home, "run", "--worktree", "--cwd", str(repo), "hello")
    assert first.returncode == 0, first.stderr
    assert "The setup command of .cockpit.toml was not run" in first.stderr
    assert not list((cli_home / "worktrees").rglob("setup.txt"))

    refused = run_in(mode, cli_home, "approve", "--cwd", str(repo))
    assert refused.returncode == 2
    assert "nothing was approved: --yes approves without asking" in refused.stderr
    approved = run_in(mode, cli_home, "approve", "--yes", "--cwd", str(repo))
    assert approved.returncode == 0, approved.stderr
    assert f"The setup command of {repo}:\n    {SETUP}\nApproved" in approved.stdout

    second = run_in(mode, cli_home, "run", "--worktree", "--cwd", str(repo), "hello")
    assert second.returncode == 0, second.stderr
    assert f"cockpit: readying the worktree: {SETUP}" in second.stderr
    (made,) = (cli_home / "worktrees").rglob("setup.txt")  # ended before the run did
    assert made.read_text().startswith("port 2")
    again = run_in(mode, cli_home, "approve", "--yes", "--cwd", str(repo))
    assert again.stdout.strip() == "Everything .cockpit.toml asks is approved."


@pytest.mark.parametrize("mode", MODES)
def test_a_repository_s_mcp_server_is_shown_whole_and_approved(
    mode: str, cli_home: Path, tmp_path: Path
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {".cockpit.toml": '[mcp.servers.docs]\ncommand = "docs-mcp"\nargs = ["--ro"]\n'},
    )
    approved = run_in(mode, cli_home, "approve", "--yes", "--cwd", str(repo))
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.splitlines() == [
        f"The MCP server of {repo}:",
        '    docs: command "docs-mcp" args ["--ro"]',
        f"Approved: agents of sessions in {repo} are handed it as they next start.",
    ]
    again = run_in(mode, cli_home, "approve", "--cwd", str(repo))
    assert again.stdout.strip() == "Everything .cockpit.toml asks is approved."
