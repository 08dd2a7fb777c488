"""What an agent's error reads like: a sentence, never its JSON-RPC data as a dict. The
built-in Claude agent without a key said "Authentication required (code -32000)
{'message': 'Set ANTHROPIC_API_KEY ...', 'variable': 'ANTHROPIC_API_KEY'}"; with a key the
API refused, the words ran into each other; and a failed turn's line on stderr said "the
agent failed the turn" twice. Checked as pure rules and end to end, through the service and
with --local."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError
from hypothesis import given
from hypothesis import strategies as st

from cockpit.agentkit.claude.config import NO_KEY, no_key
from cockpit.agentkit.claude.failures import ModelFailure, api_request_error
from cockpit.cli.exits import EXIT_AGENT
from cockpit.engine.errors import describe, request_error_line
from tests.support.cli_modes import MODES, run_in
from tests.support.fake_anthropic import FakeAnthropic, http_error


def test_data_with_a_message_reads_as_that_message() -> None:
    assert describe(no_key()) == f"Authentication required: {NO_KEY}"
    refused = RequestError.internal_error({"details": "boom from agent"})
    assert describe(refused) == "Internal error: boom from agent"


def test_details_stay_only_when_they_add_something() -> None:
    said = RequestError.auth_required({"message": "Set KEY first.", "variable": "KEY"})
    assert describe(said) == "Authentication required: Set KEY first."
    more = RequestError.invalid_params({"message": "bad path", "path": "/x"})
    assert describe(more) == "Invalid params: bad path (path: /x)"
    assert describe(RequestError.resource_not_found("file:///a")) == (
        "Resource not found (code -32002) (uri: file:///a)"
    )
    assert describe(RequestError(-32603, "The API failed (HTTP 500)", {"status": 500})) == (
        "The API failed (HTTP 500) (code -32603)"
    )
    assert describe(RequestError.internal_error()) == "Internal error (code -32603)"
    assert describe(RequestError(-32603, "x", "plain words")) == "x: plain words"


keys = st.text(min_size=1, max_size=8).filter(lambda key: key not in ("message", "details"))
values = st.none() | st.integers() | st.text(max_size=12) | st.lists(st.integers(), max_size=2)


@given(
    st.text(max_size=20),
    st.integers(-33000, -32000),
    st.text(max_size=40).filter(str.strip),
    st.dictionaries(keys, values, max_size=3),
)
def test_a_message_in_the_data_is_said_and_the_data_never_shown_raw(
    title: str, code: int, message: str, others: dict[str, object]
) -> None:
    data = {"message": message, **others}
    line = request_error_line(title, code, data)
    assert message.strip() in line
    assert repr(data) not in line or repr(data) in message


def test_a_key_the_api_refuses_is_said_in_sentences() -> None:
    failure = ModelFailure(
        "The Anthropic API failed (authentication_error, HTTP 401): invalid x-api-key", 401
    )
    assert describe(api_request_error(failure)) == (
        "Authentication required: The Anthropic API failed (authentication_error, HTTP 401): "
        f"invalid x-api-key. {NO_KEY}"
    )


@pytest.fixture
def keyless_home(cli_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`cli_home`, with no model API key or address in the environment."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return cli_home


RAW = ("{'", '{"', "'variable'", "code -32000")
"""What a user read in place of a sentence."""


@pytest.mark.parametrize("mode", MODES)
def test_the_claude_agent_without_a_key_says_what_to_set(
    mode: str, keyless_home: Path, project_dir: Path
) -> None:
    result = run_in(mode, keyless_home, "run", "--cwd", str(project_dir), "--agent", "claude", "hi")
    assert result.returncode == EXIT_AGENT, result.stderr
    assert "Authentication required: Set ANTHROPIC_API_KEY to an Anthropic API key" in (
        result.stderr
    )
    assert "ERROR: The agent asks you to sign in (Authentication required: Set" in result.stdout
    assert "it offers: Anthropic API key (anthropic-api-key, env_var)" in result.stderr
    for raw in RAW:
        assert raw not in result.stdout + result.stderr


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_key_fails_the_turn_in_one_sentence(
    mode: str, keyless_home: Path, project_dir: Path
) -> None:
    with FakeAnthropic() as fake:
        fake.script(http_error(401, "authentication_error", "invalid x-api-key"))
        result = run_in(
            mode,
            keyless_home,
            *("run", "--cwd", str(project_dir), "--agent", "claude", "hi"),
            env_extra={"ANTHROPIC_API_KEY": "sk-refused", "ANTHROPIC_BASE_URL": fake.url},
        )
    # A refused key asks the user to sign in again (exit 3, the agent's ways named).
    assert result.returncode == EXIT_AGENT, result.stderr
    line = (
        "cockpit: the agent asks you to sign in (Authentication required: The Anthropic API "
        "failed (authentication_error, HTTP 401): invalid x-api-key. Set ANTHROPIC_API_KEY"
    )
    assert line in result.stderr
    assert result.stderr.count("the agent asks you to sign in") == 1
    for raw in RAW:
        assert raw not in result.stdout + result.stderr
