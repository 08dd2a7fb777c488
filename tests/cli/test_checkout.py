"""Processes the tests start run the tree under test, even when another checkout's
`cockpit` comes first on the interpreter's path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.checkout import TREE, tree_first
from tests.support.service_helpers import cockpit_env, spawn_cockpit

WHERE = "import cockpit; print(cockpit.__file__)"


def other_checkout(folder: Path) -> Path:
    """A folder holding a `cockpit` package of another checkout, which says so and stops."""
    package = folder / "other-checkout" / "cockpit"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('the other checkout ran')\n")
    (package / "__main__.py").write_text("")
    return package.parent


def test_a_spawned_cockpit_imports_this_tree_before_another_checkout(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(other_checkout(tmp_path)))
    started = spawn_cockpit("--version", home=isolated_home)
    out, err = started.communicate(timeout=60)
    assert started.returncode == 0, err
    assert out.startswith("cockpit ")
    where = subprocess.run(
        [sys.executable, "-c", WHERE],
        env=cockpit_env(isolated_home),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()) == TREE / "cockpit" / "__init__.py"


def test_a_program_run_by_its_path_imports_this_tree(tmp_path: Path) -> None:
    """As a bundled agent runs (its own folder first on its path, not this tree), with the
    environment the tests' engines give their agents: the test process's own."""
    assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == str(TREE)
    program = tmp_path / "agent.py"
    program.write_text(WHERE + "\n")
    ran = subprocess.run(
        [sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert Path(ran.stdout.strip()) == TREE / "cockpit" / "__init__.py"


def test_the_tree_goes_first_and_other_entries_stay_after_it(tmp_path: Path) -> None:
    other = str(tmp_path / "other")
    env = tree_first({"PYTHONPATH": os.pathsep.join([other, str(TREE)]), "A": "1"})
    assert env == {"PYTHONPATH": os.pathsep.join([str(TREE), other]), "A": "1"}
    assert tree_first({})["PYTHONPATH"] == str(TREE)
