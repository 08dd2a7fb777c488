"""A permission request whose options are ambiguous is refused, never answered by guess: an
allow and a reject sharing one id let the agent read "allow" where Cockpit decided
"reject", and the row named whichever came first. The pure rule, and `cockpit run` on the
tiny agent with no terminal to ask and with --yes."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import ALLOW_KINDS, REJECT_KINDS
from cockpit.engine.permission_rules import ambiguity
from tests.cli.test_cli import cockpit
from tests.engine.test_engine_restart import TINY

KINDS = ALLOW_KINDS + REJECT_KINDS


def option(option_id: Any, kind: Any = "allow_once") -> dict[str, Any]:
    return {"optionId": option_id, "name": str(option_id), "kind": kind}


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ([option("x"), option("x", "reject_once")], "two options share the id 'x'"),
        ([], "the agent offered no options"),
        ([option(""), option("n", "reject_once")], "an option has no id"),
        ([option(None)], "an option has no id"),
        ([option("a", "maybe")], "an option has the unknown kind 'maybe'"),
    ],
)
def test_ambiguous_options_say_why(options: list[dict[str, Any]], why: str) -> None:
    assert ambiguity(options) == why


def test_the_options_real_agents_send_are_clear() -> None:
    codex = [option("approved"), option("abort", "reject_once")]
    gemini = [option("proceed_always", "allow_always"), option("proceed_once"), option("cancel")]
    assert ambiguity(codex) is None
    assert ambiguity(gemini) is None


@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(KINDS)), min_size=1)
)
def test_options_are_clear_exactly_when_every_id_is_their_own(
    drawn: list[tuple[str, str]],
) -> None:
    options = [option(option_id, kind) for option_id, kind in drawn]
    ids = [option_id for option_id, _ in drawn]
    assert (ambiguity(options) is None) == (len(set(ids)) == len(ids))


@pytest.mark.parametrize(
    ("word", "flags"),
    [
        ("ask-twins", []),  # no terminal to ask: Cockpit meant to reject, and sent "x"
        ("ask-twins-always", ["--yes"]),  # --yes meant to allow; the row said "Rejected"
        ("ask-none", []),  # nothing to choose: it said "the turn was cancelled"
    ],
)
def test_cockpit_run_refuses_ambiguous_options_and_records_it(
    tmp_path: Path, word: str, flags: list[str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    command = f"{sys.executable} {TINY}"
    result = cockpit(home, "run", "--cwd", str(project), "--agent-cmd", command, *flags, word)
    assert result.returncode == 0, result.stderr
    assert "answered: cancelled" in result.stdout
    with sqlite3.connect(home / "cockpit.db") as db:
        (text,) = db.execute("SELECT text FROM messages WHERE kind = 'permission'").fetchone()
    assert text.startswith("Refused: Delete the notes (")
    assert text.endswith("); the agent was told it was cancelled.")
    assert ("share the id 'x'" in text) == (word != "ask-none")
