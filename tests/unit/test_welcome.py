"""The welcome's words: the keys to start with, and the demo's scenario words as its
scenario file lists them (never a copy that could drift)."""

from __future__ import annotations

from cockpit.agentkit.scenarios import read_scenarios
from cockpit.ui.welcome import demo_words, welcome_text


def test_the_demo_words_are_the_scenario_files() -> None:
    assert demo_words() == tuple(read_scenarios())


def test_the_demo_agent_gets_its_words_and_another_agent_does_not() -> None:
    words = ("tour", "think", "plan")
    demo = welcome_text("demo", words).plain
    assert "tour think plan" in demo and "try tour" in demo
    other = welcome_text("gemini", words).plain
    assert "tour think plan" not in other and "gemini" in other
    for text in (demo, other):
        assert "Enter" in text and "Ctrl+O" in text and "F1" in text and "Ctrl+N" in text
        assert "!command" in text


def test_no_words_no_scenario_line() -> None:
    assert "scenario" not in welcome_text("demo", ()).plain
