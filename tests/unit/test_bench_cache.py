"""The prompt-cache benchmark runs, and tells the two builders apart."""

from __future__ import annotations

import pytest

from tests.bench.cache import measure, script


def test_the_scripted_turn_has_one_tool_call_per_step_then_a_summary() -> None:
    replies = script(20)
    assert len(replies) == 20
    assert all(any(b.type == "tool_use" for b in r.blocks) for r in replies[:-1])
    assert [b.type for b in replies[-1].blocks] == ["text"]


async def test_a_short_run_measures_both_builders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "restored-after-the-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    result = await measure(6)
    assert result["steps"] == 6
    assert result["ours_broken_prefixes"] == 0
    assert result["naive_broken_prefixes"] >= 3
    assert result["ours_cache_share"] > result["naive_cache_share"]
    assert result["ours_effective_input_cost"] < result["naive_effective_input_cost"]
    assert result["ours_per_step_share"][0] == 0.0  # nothing was cached before the first call
