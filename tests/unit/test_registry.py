"""The agent registry: bundled entries, user overrides, clear messages for broken files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cockpit.engine.registry import agent_from_command, executable, load_registry, parse_agents
from cockpit.paths import agents_dir


def test_bundled_agents_load() -> None:
    registry = load_registry(Path("/nonexistent"))
    assert registry.problems == []
    assert {"demo", "claude-code", "gemini", "codex", "opencode", "goose"} <= set(registry.agents)
    demo = registry.get("demo")
    assert demo.command == (sys.executable, str(agents_dir() / "demo_agent.py"))
    assert registry.get("gemini").command == ("gemini", "--acp")
    assert registry.get("gemini").missing_file == "empty"
    assert registry.get("gemini").env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    assert registry.get("codex").command == ("codex-acp",)
    assert registry.get("opencode").command == ("opencode", "acp")
    assert registry.get("goose").command == ("goose", "acp")
    assert registry.get("claude-code").command == ("claude-agent-acp",)
    claude = registry.get("claude")
    assert claude.command == (sys.executable, str(agents_dir() / "claude_agent.py"))
    assert (claude.title, claude.install) == (
        "Claude (built-in)",
        "Bundled; needs ANTHROPIC_API_KEY",
    )
    assert executable(claude) is not None
    assert executable(demo) is not None
    assert executable(registry.get("goose")) is None


def test_user_entries_add_and_override(tmp_path: Path) -> None:
    (tmp_path / "agents.toml").write_text(
        '[agents.mine]\ncommand = "my-agent --acp --flag=\'a b\'"\ntitle = "Mine"\n\n'
        '[agents.gemini]\nenv = { GEMINI_API_KEY = "k" }\n'
    )
    registry = load_registry(tmp_path)
    assert registry.problems == []
    assert registry.get("mine").command == ("my-agent", "--acp", "--flag=a b")
    gemini = registry.get("gemini")
    assert gemini.command == ("gemini", "--acp")
    assert dict(gemini.env) == {"GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_API_KEY": "k"}


def test_a_malformed_user_file_names_file_and_line_and_bundled_agents_still_load(
    tmp_path: Path,
) -> None:
    user = tmp_path / "agents.toml"
    user.write_text('[agents.ok]\ncommand = ["x"]\n\n[agents.bad]\ncommand = [1, 2\n')
    registry = load_registry(tmp_path)
    assert "demo" in registry.agents
    assert len(registry.problems) == 1
    assert registry.problems[0].startswith(f"{user}:")
    assert registry.problems[0].startswith(f"{user}:5: not valid TOML")


def test_an_invalid_entry_names_its_line(tmp_path: Path) -> None:
    user = tmp_path / "agents.toml"
    user.write_text('[agents.good]\ncommand = ["x"]\n\n\n[agents.bad]\ncommand = []\ntypo = 1\n')
    registry = load_registry(tmp_path)
    assert "good" in registry.agents and "bad" not in registry.agents
    assert f"{user}:5: agent 'bad': unknown field 'typo'" in registry.problems
    assert (
        f"{user}:5: agent 'bad': command must be a non-empty list of strings" in registry.problems
    )


def test_unknown_agent_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"known agents: .*demo"):
        load_registry(Path("/nonexistent")).get("nope")


def test_agent_command_is_split_like_a_shell_but_never_run_by_one() -> None:
    spec = agent_from_command("python3 -m my_agent --name 'two words'; rm -rf /")
    assert spec.command == ("python3", "-m", "my_agent", "--name", "two words;", "rm", "-rf", "/")


def test_placeholders_are_expanded() -> None:
    agents, problems = parse_agents('[agents.x]\ncommand = ["{python}", "{agents}/a.py"]\n', "t")
    assert problems == []
    assert agents["x"].command == (sys.executable, f"{agents_dir()}/a.py")


def test_an_agent_works_ten_steps_below_cockpit_unless_its_entry_says_otherwise(
    tmp_path: Path,
) -> None:
    user = tmp_path / "agents.toml"
    user.write_text(
        '[agents.gemini]\nnice = 0\n\n[agents.mine]\ncommand = ["x"]\nnice = 19\n\n'
        '[agents.bad]\ncommand = ["x"]\nnice = 20\n\n[agents.worse]\ncommand = ["x"]\nnice = true\n'
    )
    registry = load_registry(tmp_path)
    assert registry.get("demo").nice == 10
    assert registry.get("gemini").nice == 0
    assert registry.get("gemini").command == ("gemini", "--acp")  # the rest stays bundled
    assert registry.get("mine").nice == 19
    assert "bad" not in registry.agents and "worse" not in registry.agents
    for name, line in (("bad", 8), ("worse", 12)):
        assert (
            f"{user}:{line}: agent {name!r}: nice must be a whole number from 0 to 19"
            in registry.problems
        )
