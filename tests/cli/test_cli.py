"""The `cockpit` command line, run as a real subprocess against the demo agent."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from store.store import Store
from tests.support.engine_helpers import DEMO
from tests.support.forked_cockpit import run_command

ROOT = Path(__file__).resolve().parents[2]


def cockpit(
    home: Path, *args: str, cwd: Path | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COCKPIT_HOME": str(home)}
    return run_command(args, env=env, cwd=cwd or ROOT, stdin=stdin, timeout=120)


def test_run_streams_the_reply_and_exits_zero(tmp_path: Path, readme_project: Path) -> None:
    home = tmp_path / "home"
    result = cockpit(home, "run", "--cwd", str(readme_project), "show", "me", "around")
    assert result.returncode == 0, result.stderr
    assert "cockpit agents" in result.stdout
    listed = json.loads(cockpit(home, "ls", "--json").stdout)
    assert len(listed) == 1
    assert listed[0]["title"] == "show me around"
    assert listed[0]["agent"] == "demo"
    shown = json.loads(cockpit(home, "show", listed[0]["id"][:4], "--json").stdout)
    assert [row["kind"] for row in shown["rows"]] == ["user", "agent"]
    assert shown["rows"][1]["text"] in result.stdout
    markdown = cockpit(home, "show", listed[0]["id"], "--md").stdout
    assert (
        markdown.startswith("# show me around\n")
        and "## You" in markdown
        and "## Agent" in markdown
    )
    plain = cockpit(home, "show", listed[0]["id"]).stdout
    assert plain.startswith("> show me around\n")


def test_run_reports_tools_decisions_and_plans(tmp_path: Path, readme_project: Path) -> None:
    result = cockpit(
        tmp_path / "home", "run", "--cwd", str(readme_project), "--yes", "plan", "and", "tools"
    )
    assert result.returncode == 0, result.stderr
    assert "Plan:\n  [x]" in result.stdout
    assert "* Allowed once: Write demo-notes.md (by policy)" in result.stdout
    assert "[execute] Run a command - done" in result.stdout
    assert "hello from the terminal" in result.stdout


def test_permissions_are_rejected_without_a_terminal_or_a_flag(
    tmp_path: Path, readme_project: Path
) -> None:
    result = cockpit(tmp_path / "home", "run", "--cwd", str(readme_project), "permission")
    assert result.returncode == 0, result.stderr
    assert "* Rejected: Write demo-notes.md (no terminal to ask)" in result.stdout
    assert not (readme_project / "demo-notes.md").exists()
    allowed = cockpit(
        tmp_path / "home", "run", "--cwd", str(readme_project), "--allow", "edit", "permission"
    )
    assert "* Allowed once: Write demo-notes.md (by policy)" in allowed.stdout


def test_a_crash_exits_three_with_the_stop_reason(tmp_path: Path, readme_project: Path) -> None:
    result = cockpit(tmp_path / "home", "run", "--cwd", str(readme_project), "crash")
    assert result.returncode == 3
    assert "stop reason 'error'" in result.stderr
    assert "ERROR: The agent exited with code 3." in result.stdout


def test_unknown_agent_and_missing_folder_are_usage_errors(tmp_path: Path) -> None:
    unknown = cockpit(tmp_path / "home", "run", "--agent", "nope", "hi")
    assert unknown.returncode == 2
    assert "no agent called 'nope'" in unknown.stderr
    missing = cockpit(tmp_path / "home", "run", "--cwd", str(tmp_path / "nowhere"), "hi")
    assert missing.returncode == 2
    assert "is not a folder" in missing.stderr
    assert cockpit(tmp_path / "home", "show", "zzzz").returncode == 2


def test_any_command_can_be_the_agent(tmp_path: Path, readme_project: Path) -> None:
    result = cockpit(
        tmp_path / "home",
        "run",
        "--cwd",
        str(readme_project),
        "--agent-cmd",
        f"{sys.executable} {DEMO}",
        "think",
    )
    assert result.returncode == 0, result.stderr
    assert "(thinking) " in result.stdout


def test_agents_lists_availability_and_demo_words(tmp_path: Path) -> None:
    listing = json.loads(cockpit(tmp_path / "home", "agents", "--json").stdout)
    names = {agent["name"]: agent for agent in listing["agents"]}
    assert names["demo"]["available"] is True
    assert names["goose"]["available"] is False
    assert names["goose"]["install"]
    assert {"table", "tools", "crash", "slow"} <= set(listing["demo_scenarios"])
    text = cockpit(tmp_path / "home", "agents").stdout
    assert "not installed" in text and "The demo agent answers these words" in text


def test_a_broken_user_agents_file_is_reported_and_demo_still_runs(
    tmp_path: Path, readme_project: Path
) -> None:
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "agents.toml").write_text("[agents.x\ncommand = 1\n")
    result = cockpit(home, "run", "--cwd", str(readme_project), "hello")
    assert result.returncode == 0
    assert f"{home / 'config' / 'agents.toml'}:1: not valid TOML" in result.stderr


def test_escape_sequences_reach_a_pipe_raw_but_a_terminal_clean(
    tmp_path: Path, readme_project: Path
) -> None:
    home = tmp_path / "home"
    piped = cockpit(home, "run", "--cwd", str(readme_project), "escape")
    assert "\x1b[31m" in piped.stdout  # a pipe gets what the agent said
    script = (
        "import os, pty, sys\n"
        "pid, fd = pty.fork()\n"
        "if pid == 0:\n"
        f"    os.execvp(sys.executable, [sys.executable, '-m', 'cockpit', 'run', '--cwd', {str(readme_project)!r}, 'escape'])\n"
        "out = b''\n"
        "while True:\n"
        "    try:\n"
        "        data = os.read(fd, 65536)\n"
        "    except OSError:\n"
        "        break\n"
        "    if not data:\n"
        "        break\n"
        "    out += data\n"
        "os.waitpid(pid, 0)\n"
        "sys.stdout.write(out.decode('utf-8', 'replace'))\n"
    )
    on_tty = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "COCKPIT_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "red" in on_tty.stdout
    assert (
        "\x1b[31m" not in on_tty.stdout
        and "\x1b]0;" not in on_tty.stdout
        and "\x07" not in on_tty.stdout
    )


async def many_sessions(home: Path, count: int) -> None:
    """A store holding `count` sessions with long titles."""
    store = await Store.open(home / "cockpit.db")
    for number in range(count):
        await store.create_session(
            agent="demo", command=["demo"], cwd=str(home), title=f"session {number} " * 8
        )
    await store.close()


def test_a_reader_that_goes_away_ends_the_listing_without_a_traceback(tmp_path: Path) -> None:
    """`cockpit ls --json | head`: the listing is longer than the pipe holds and the reader
    closes it after the first bytes (it printed a BrokenPipeError traceback)."""
    home = tmp_path / "home"
    home.mkdir()
    asyncio.run(many_sessions(home, 400))
    process = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "ls", "--json"],
        cwd=ROOT,
        env={**os.environ, "COCKPIT_HOME": str(home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10)
    process.stdout.close()  # `head` has what it wanted
    errors = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141, errors
    assert "Traceback" not in errors
