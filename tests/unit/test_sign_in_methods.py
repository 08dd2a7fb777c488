"""The sign-in ways real agents offer, read from their recorded `initialize` answers
(tests/captures): codex-acp's browser sign-in and two variables, gemini-cli's Google
sign-in and its key method, and nothing from claude-agent-acp to a client that did not
declare terminal sign-in. Also the pure rules of a session's sign-in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.sign_in import SessionSignIn, offered_methods, web_addresses
from cockpit.records import KEY_FIELD, read_sign_in_method

CAPTURES = Path(__file__).parents[1] / "captures"


def initialize_result(name: str) -> dict[str, Any]:
    for line in (CAPTURES / name).read_text(encoding="utf-8").splitlines():
        frame = json.loads(line)["frame"]
        if frame.get("id") == 0 and "result" in frame:
            result: dict[str, Any] = frame["result"]
            return result
    raise AssertionError(f"{name} holds no initialize answer")


def test_codex_offers_a_browser_sign_in_and_two_variables() -> None:
    methods = offered_methods(initialize_result("codex-acp-text.jsonl")["authMethods"])
    assert [(m.id, m.kind, m.variables) for m in methods] == [
        ("chatgpt", "agent", ()),
        ("codex-api-key", "env_var", ("CODEX_API_KEY",)),
        ("openai-api-key", "env_var", ("OPENAI_API_KEY",)),
    ]
    assert methods[0].label.startswith("Login with ChatGPT: Use your ChatGPT login")
    assert methods[2].fields == ("OPENAI_API_KEY",)


def test_gemini_offers_google_and_a_key_method() -> None:
    methods = offered_methods(initialize_result("gemini-cli-multi.jsonl")["authMethods"])
    assert [(m.id, m.kind) for m in methods] == [
        ("oauth-personal", "agent"),
        ("gemini-api-key", "key"),
        ("vertex-ai", "agent"),
        ("gateway", "agent"),
    ]
    assert methods[0].name == "Log in with Google"
    assert methods[1].fields == (KEY_FIELD,)


def test_claude_agent_acp_offers_nothing_to_a_client_without_terminal_sign_in() -> None:
    assert offered_methods(initialize_result("claude-agent-acp-multi.jsonl")["authMethods"]) == ()


def test_a_key_method_sends_its_key_in_the_request_and_nothing_in_the_environment() -> None:
    sign_in = SessionSignIn("s-1")
    sign_in.offer(initialize_result("gemini-cli-multi.jsonl")["authMethods"], {})
    sign_in.choose("gemini-api-key", {KEY_FIELD: "k-1"})
    assert sign_in.request_meta() == {KEY_FIELD: "k-1"} and sign_in.variables == {}
    sign_in.choose("oauth-personal", {})
    assert sign_in.request_meta() == {} and sign_in.variables == {}


def test_an_env_var_method_fills_the_agents_environment_only_with_its_variables() -> None:
    sign_in = SessionSignIn("s-1")
    sign_in.offer(
        initialize_result("codex-acp-text.jsonl")["authMethods"], {"auth": {"logout": {}}}
    )
    assert sign_in.logout
    sign_in.choose("openai-api-key", {"OPENAI_API_KEY": "k-2", "PATH": "/evil"})
    assert sign_in.variables == {"OPENAI_API_KEY": "k-2"}
    with pytest.raises(ValueError, match="needs a value for CODEX_API_KEY"):
        sign_in.choose("codex-api-key", {})
    assert sign_in.variables == {"OPENAI_API_KEY": "k-2"}  # a refused choice changes nothing
    sign_in.forget()
    assert sign_in.variables == {} and sign_in.chosen is None


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4)))  # fmt: skip
def test_reading_a_method_never_raises(value: object) -> None:
    read = read_sign_in_method(value)
    assert read is None or read.id


def test_web_addresses_are_found_once_without_a_sentences_dot() -> None:
    text = "Go to https://a.example/x?c=1. Then https://a.example/x?c=1 again, or http://b.example"
    assert web_addresses(text) == ["https://a.example/x?c=1", "http://b.example"]
