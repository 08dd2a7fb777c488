"""`cockpit run`'s exit codes say what happened: each one from a real subprocess of the
tiny agent (or of a program that does not exist), and the pure rule that picks it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.cli.exits import (
    EXIT_AGENT,
    EXIT_CANCELLED,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_STOPPED,
    exit_message,
    run_exit,
)
from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY

TINY_CMD = f"{sys.executable} {TINY}"


@pytest.mark.parametrize(
    ("stop_reason", "alive", "interrupted", "code"),
    [
        ("end_turn", True, False, EXIT_OK),
        ("end_turn", True, True, EXIT_OK),  # a Ctrl-C the agent did not heed
        ("max_tokens", True, False, EXIT_STOPPED),
        ("refusal", True, False, EXIT_STOPPED),
        ("cancelled", True, False, EXIT_STOPPED),  # the agent's own choice
        ("cancelled", True, True, EXIT_CANCELLED),
        ("error", True, True, EXIT_CANCELLED),  # an agent that answers a cancel with an error
        ("error", True, False, EXIT_FAILED),
        ("error", False, False, EXIT_AGENT),
        ("error", False, True, EXIT_AGENT),  # gone, whatever else happened
    ],
)
def test_the_exit_code_follows_how_the_turn_ended(
    stop_reason: str, alive: bool, interrupted: bool, code: int
) -> None:
    assert run_exit(stop_reason, agent_alive=alive, interrupted=interrupted) == code


def test_the_message_says_why() -> None:
    failed = exit_message(EXIT_FAILED, "error", "The agent failed the turn: boom\nmore")
    assert failed == "The agent failed the turn: boom"  # said once, as the row says it
    assert exit_message(EXIT_FAILED, "error", "") == (
        "the agent failed the turn (it answered the prompt with an error)"
    )
    assert exit_message(EXIT_AGENT, "error", "") == (
        "the turn ended with stop reason 'error': the agent is gone"
    )
    assert exit_message(EXIT_STOPPED, "cancelled", "").endswith(
        "(the agent cancelled it by itself)"
    )
    assert exit_message(EXIT_CANCELLED, "cancelled", "") == (
        "the turn ended with stop reason 'cancelled' (Ctrl-C)"
    )


def run_tiny(tmp_path: Path, project: Path, command: str, prompt: str) -> tuple[int, str, str]:
    result = cockpit(
        tmp_path / "home", "run", "--cwd", str(project), "--agent-cmd", command, prompt
    )
    return result.returncode, result.stdout, result.stderr


def test_a_turn_the_agent_fails_while_it_stays_up_exits_four(
    tmp_path: Path, project_dir: Path
) -> None:
    code, out, err = run_tiny(tmp_path, project_dir, TINY_CMD, "fail")
    assert code == EXIT_FAILED == 4, err
    assert "cockpit: The agent failed the turn: " in err
    assert err.lower().count("the agent failed the turn") == 1, err
    assert "the tiny agent fails this turn" in err
    assert "ERROR: The agent failed the turn" in out


def test_a_cancel_the_agent_chose_itself_exits_one(tmp_path: Path, project_dir: Path) -> None:
    code, out, err = run_tiny(tmp_path, project_dir, TINY_CMD, "cancelled")
    assert code == EXIT_STOPPED == 1, err
    assert "! The turn was cancelled." in out
    assert (
        "cockpit: the turn ended with stop reason 'cancelled' (the agent cancelled it by itself)"
        in err
    )


def test_an_agent_that_cannot_start_exits_three(tmp_path: Path, project_dir: Path) -> None:
    code, _out, err = run_tiny(tmp_path, project_dir, str(tmp_path / "no-such-agent"), "hello")
    assert code == EXIT_AGENT == 3, err
    assert "cockpit: the turn ended with stop reason 'error': " in err
    assert "was not found" in err


def test_an_agent_that_dies_during_the_turn_exits_three(tmp_path: Path, project_dir: Path) -> None:
    code, _out, err = run_tiny(tmp_path, project_dir, TINY_CMD, "ask-and-exit")
    assert code == EXIT_AGENT == 3, err
    assert "cockpit: the turn ended with stop reason 'error': The agent exited with code 9" in err
