"""The code stays lint-clean and type-checked (`store/` under mypy --strict)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_is_clean() -> None:
    result = run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean_and_store_is_strict() -> None:
    result = run("mypy", "store", "cockpit", "tests", "acp/demo_agent.py", "acp/claude_agent.py")
    assert result.returncode == 0, result.stdout + result.stderr
    strict = run("mypy", "--strict", "store")
    assert strict.returncode == 0, strict.stdout + strict.stderr
