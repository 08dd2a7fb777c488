"""Shared test configuration: deterministic hypothesis, isolated stores."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from store.store import Store

settings.register_profile(
    "cockpit",
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "cockpit"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own COCKPIT_HOME: no test touches a user's real store."""
    home = tmp_path / "cockpit-home"
    monkeypatch.setenv("COCKPIT_HOME", str(home))
    return home


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """An open store in a fresh database file."""
    opened = await Store.open(tmp_path / "store" / "cockpit.db")
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture(autouse=True)
def truecolour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs as in a truecolour terminal, whatever terminal runs the suite: the
    app picks its theme by the terminal's colours (a test of that sets TERM and COLORTERM
    itself)."""
    monkeypatch.setenv("COLORTERM", "truecolor")
