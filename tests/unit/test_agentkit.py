"""The bundled agents' kit (`cockpit.agentkit`): the demo's scenario words as data, checked
against its handler table; the settings, errors and layering every bundled agent shares."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from acp.core import AgentSideConnection, RequestError

from cockpit.agentkit.claude.config import MAX_STEPS as CLAUDE_MAX_STEPS
from cockpit.agentkit.claude.config import models as claude_models
from cockpit.agentkit.claude.session import Session as ClaudeSession
from cockpit.agentkit.claude.turn import Turn as ClaudeTurn
from cockpit.agentkit.demo import main as demo_main
from cockpit.agentkit.demo.handlers import HANDLERS
from cockpit.agentkit.demo.history import Session as DemoSession
from cockpit.agentkit.demo.tools import tool_execute
from cockpit.agentkit.demo.turn import Turn as DemoTurn
from cockpit.agentkit.demo.turn import TurnNeeds as DemoTurnNeeds
from cockpit.agentkit.errors import error_text, resource_missing
from cockpit.agentkit.scenarios import (
    ScenarioError,
    check_handlers,
    parse_scenarios,
    read_scenarios,
    scenarios_path,
)
from cockpit.agentkit.settings import MODES, check_mode, select_option, session_modes
from cockpit.cli.agents import demo_scenarios
from store.chunk_log import ChunkLog
from tests.support.acp_client import RecordingClient
from tests.support.checkout import tree_first

ROOT = Path(__file__).resolve().parents[2]

TWO = """
[[scenario]]
word = "zeta"
does = "comes first"

[[scenario]]
word = "alpha"
does = "comes second"
"""


def test_scenarios_keep_the_order_of_the_file() -> None:
    assert list(parse_scenarios(TWO).items()) == [
        ("zeta", "comes first"),
        ("alpha", "comes second"),
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "no [[scenario]] entries"),
        ("[[scenario]\n", "not valid TOML"),
        ('[[scenario]]\nword = "Tour"\ndoes = "x"\n', "lower-case letters"),
        ('[[scenario]]\nword = "two words"\ndoes = "x"\n', "lower-case letters"),
        ('[[scenario]]\nword = "tour"\n', "`does` must be a text"),
        ('[[scenario]]\nword = "tour"\ndoes = "  "\n', "`does` must be a text"),
        (TWO + '\n[[scenario]]\nword = "zeta"\ndoes = "again"\n', "'zeta' is listed twice"),
    ],
)
def test_a_malformed_scenario_file_is_refused(text: str, says: str) -> None:
    with pytest.raises(ScenarioError, match=re.escape(says)):
        parse_scenarios(text, "test.toml")


def test_handlers_and_words_must_match_both_ways() -> None:
    check_handlers(["a", "b"], {"b": 1, "a": 2})
    with pytest.raises(ScenarioError, match="words without a handler: b"):
        check_handlers(["a", "b"], ["a"])
    with pytest.raises(ScenarioError, match=r"handlers without a word in demo_scenarios\.toml: c"):
        check_handlers(["a"], ["a", "c"])


def test_the_bundled_file_matches_the_demo_handlers() -> None:
    scenarios = read_scenarios()
    check_handlers(scenarios, HANDLERS)
    assert list(scenarios)[:2] == ["tour", "think"]  # the tour first, then the thought


def test_cockpit_agents_lists_the_words_the_demo_runs() -> None:
    assert demo_scenarios() == read_scenarios(scenarios_path())


@pytest.mark.parametrize("change", ["missing", "extra"])
def test_the_demo_agent_refuses_to_start_when_they_disagree(
    monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    handlers = dict(HANDLERS)
    if change == "missing":
        del handlers["huge"]
    else:
        handlers["juggle"] = handlers["tour"]
    monkeypatch.setattr(demo_main, "HANDLERS", handlers)
    with pytest.raises(ScenarioError, match="huge" if change == "missing" else "juggle"):
        demo_main.main([])  # raises before it touches stdio


def test_modes_and_options_as_acp_describes_them() -> None:
    state = session_modes("plan")
    assert state.current_mode_id == "plan"
    assert [mode.id for mode in state.available_modes] == list(MODES) == ["ask", "accept", "plan"]
    check_mode("accept")
    with pytest.raises(RequestError) as refused:
        check_mode("yolo")
    assert refused.value.data == {"modeId": "yolo", "known": ["ask", "accept", "plan"]}
    option = select_option("model", "Model", "model", "b", {"a": "A", "b": "B"})
    assert option.current_value == "b"
    assert [(choice.value, choice.name) for choice in option.options] == [("a", "A"), ("b", "B")]


def test_errors_read_as_one_line_and_keep_their_data() -> None:
    error = RequestError.invalid_params({"path": "/x"})
    assert error_text(error) == f'{error} (code -32602): {{"path": "/x"}}'
    missing = resource_missing("file:///a", reason="gone")
    assert missing.code == RequestError.resource_not_found("x").code
    assert missing.data is not None and missing.data["reason"] == "gone"


def test_the_kit_loads_no_textual_and_its_scenario_reader_no_sdk() -> None:
    code = (
        "import sys\n"
        "import cockpit.agentkit.scenarios\n"
        "before = {m.split('.')[0] for m in sys.modules}\n"
        "import cockpit.agentkit.demo.main, cockpit.agentkit.claude.main\n"
        "after = {m.split('.')[0] for m in sys.modules}\n"
        "print(' '.join(sorted(before)), '|', ' '.join(sorted(after)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    before, after = (set(part.split()) for part in result.stdout.split("|"))
    assert "acp" not in before and "anthropic" not in before
    assert {"acp", "store"} <= after
    assert not after & {"textual", "rich", "anthropic"}  # the Anthropic SDK: at the first call


@pytest.mark.parametrize("script", ["demo_agent.py", "claude_agent.py"])
def test_a_bundled_agent_with_no_client_on_stdin_stops_at_once(script: str, tmp_path: Path) -> None:
    """Stdin at /dev/null (or a file), which the event loop cannot wait on: the agent reads
    it to its end and stops, as when a client leaves, rather than wait for good."""
    ran = subprocess.run(
        [sys.executable, str(ROOT / "acp" / script)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=10,
        env=tree_first({"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}),
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-2000:]
    assert ran.stdout == b""


async def test_a_claude_turn_alone_stops_at_its_step_limit_without_calling_the_model(
    tmp_path: Path,
) -> None:
    """Built from the client connection and the model's client, without the agent."""
    log = await ChunkLog.open(tmp_path / "log.db")
    session = ClaudeSession("s1", str(tmp_path), log, [], model=next(iter(claude_models())))
    client = RecordingClient()

    def no_model() -> Any:
        raise AssertionError("the model was called past the step limit")

    try:
        turn = ClaudeTurn(cast(AgentSideConnection, client), no_model, session)
        turn.step = CLAUDE_MAX_STEPS
        assert await turn.loop() == "max_turn_requests"
    finally:
        await log.close()
    [shown] = client.updates
    assert f"I stopped after {CLAUDE_MAX_STEPS} model calls" in shown.content.text
    assert [(entry.role, entry.data["kind"]) for entry in session.entries] == [
        ("system", "max_turn_requests")
    ]


async def test_a_demo_turn_alone_tells_a_client_without_terminals_it_ran_nothing(
    tmp_path: Path,
) -> None:
    """Built from what it needs of the agent (the connection, the client's abilities),
    without the agent: the command is asked for, allowed, and fails as not runnable."""
    client = RecordingClient()
    needs = DemoTurnNeeds(
        conn=cast(AgentSideConnection, client),
        writer=cast(asyncio.StreamWriter, None),
        can=lambda ability: ability != "terminal",
        scenarios={},
        slow=False,
    )
    turn = DemoTurn(needs, DemoSession("s1", str(tmp_path)), "tools")
    assert await tool_execute(turn) == "could not run the command: the client offers no terminal"
    ended = client.updates[-1]
    assert ended.status == "failed"
    assert ended.content[-1].content.text == "The client offers no terminal."
