"""`cockpit run` and a form the agent asks: with no terminal to fill it in, the form is
cancelled (with a row that says why), and `--yes`, which allows every permission
question, never answers a form. Through the service and with `--local`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_modes import MODES, run_in


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("yes", [False, True], ids=["asking", "--yes"])
def test_run_with_no_terminal_cancels_a_form(
    mode: str, yes: bool, cli_home: Path, readme_project: Path
) -> None:
    allow = ("--yes",) if yes else ()
    result = run_in(mode, cli_home, "run", "--cwd", str(readme_project), *allow, "form")
    assert result.returncode == 0, result.stderr
    assert "Form cancel." in result.stdout
    listed = json.loads(run_in(mode, cli_home, "ls", "--json").stdout)
    shown = json.loads(run_in(mode, cli_home, "show", listed[0]["id"], "--json").stdout)
    (row,) = [row for row in shown["rows"] if row["kind"] == "permission"]
    assert row["text"].startswith("Cancelled the form")
    assert row["payload"]["decidedBy"] == "no terminal to ask"
