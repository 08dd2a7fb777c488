"""Checks of the test suite itself that no single test makes.

Lint, format, types and the import layering are CI steps (`.ci/run`), not tests. What is
left here: syrupy fails a run that leaves a stored snapshot unused, but not under
pytest-xdist (it skips the check there), so a snapshot whose test was renamed or removed
would linger unnoticed; this test makes that check instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "tests" / "snapshots" / "__snapshots__"


def collected_tests(modules: list[Path]) -> set[str]:
    """The tests pytest collects from `modules`, in a fresh process, as `module::name[params]`."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist"]
    result = subprocess.run(
        [*command, "-p", "no:cacheprovider", *map(str, modules)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {
        f"{Path(path).stem}::{name}"
        for path, _, name in (line.partition("::") for line in result.stdout.splitlines())
        if name
    }


def test_every_stored_snapshot_belongs_to_a_test() -> None:
    folders = sorted(path for path in SNAPSHOTS.iterdir() if path.is_dir())
    modules = [ROOT / "tests" / "snapshots" / f"{folder.name}.py" for folder in folders]
    assert [module for module in modules if not module.exists()] == []
    tests = collected_tests(modules)
    stored = {f"{folder.name}::{svg.stem}" for folder in folders for svg in folder.glob("*.svg")}
    assert stored
    assert stored - tests == set()
