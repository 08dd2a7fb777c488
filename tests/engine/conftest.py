"""Fixtures of the engine tests (a module's own fixture of the same name wins)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from cockpit.api import EngineAPI
from cockpit.engine.plans.tokens import PlanTokens
from tests.support.ui_service_helpers import Engines


@pytest.fixture
async def engine(engines: Engines, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[EngineAPI]:
    """An engine of the test's kind (in process, or a service's client) whose `!commands`
    run in /bin/sh."""
    monkeypatch.setenv("SHELL", "/bin/sh")
    opened: EngineAPI = await engines.factory()()
    yield opened
    await opened.close()


@pytest.fixture
def minted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every token the engine mints, to look for them where they must never be."""
    tokens: list[str] = []
    mint = PlanTokens.mint

    def spy(self: PlanTokens, session: str) -> str:
        tokens.append(mint(self, session))
        return tokens[-1]

    monkeypatch.setattr(PlanTokens, "mint", spy)
    return tokens
