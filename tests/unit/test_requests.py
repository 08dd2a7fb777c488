"""The wire projection (`store.requests`): grouping rules, breakpoints, and the property that
makes prompt caching work: appending to the log never changes what earlier steps send."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store import entries as e
from store.entries import Draft, Entry, make_entry
from store.requests import (
    MIN_THINKING_BUDGET,
    MISSING_RESULT,
    RequestSpec,
    breakpoint_paths,
    compose_request,
    model_version,
    naive_request,
    place_breakpoints,
    thinking_config,
    wire_messages,
    without_breakpoints,
)

SPEC = RequestSpec(
    model="claude-test",
    max_tokens=1000,
    system="You are a test.",
    tools=({"name": "read_file", "description": "Read.", "input_schema": {"type": "object"}},),
)


@dataclass
class Log:
    """A log built the way the agent builds one, with the points where it calls the model."""

    entries: list[Entry] = field(default_factory=list)
    points: list[int] = field(default_factory=list)

    def add(self, turn: str, step: int, draft: Draft) -> Log:
        self.entries.append(make_entry(len(self.entries) + 1, turn, step, draft))
        return self

    def call(self) -> Log:
        self.points.append(len(self.entries))
        return self

    def request(self, point: int) -> dict[str, Any]:
        return compose_request(self.entries[:point], SPEC)


def dumped(message: Any) -> str:
    return json.dumps(without_breakpoints(message))


def three_step_turn() -> Log:
    log = Log()
    log.add("t1", 0, e.user_text("fix the bug", "u1")).call()
    log.add("t1", 1, e.thinking("Look first.", "sig-1", "m1"))
    log.add("t1", 1, e.assistant_text("Reading.", "m2"))
    log.add("t1", 1, e.tool_call("c1", "read_file", {"path": "a.py"}))
    log.add("t1", 1, e.tool_result("c1", "read_file", "print(1)"))
    log.call()
    log.add("t1", 2, e.tool_call("c2", "read_file", {"path": "b.py"}))
    log.add("t1", 2, e.tool_call("c3", "read_file", {"path": "c.py"}))
    log.add("t1", 2, e.tool_result("c2", "read_file", "print(2)"))
    log.add("t1", 2, e.tool_result("c3", "read_file", "print(3)", is_error=True))
    log.call()
    log.add("t1", 3, e.tool_call("c4", "read_file", {"path": "d.py"}))
    log.add("t1", 3, e.tool_result("c4", "read_file", ""))
    log.call()
    log.add("t1", 4, e.assistant_text("Fixed.", "m3"))
    return log


def test_each_step_is_one_assistant_message_and_its_results_the_next_user_message() -> None:
    log = three_step_turn()
    messages = wire_messages(log.entries)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "Look first.", "signature": "sig-1"},
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}},
    ]
    assert messages[4]["content"] == [
        {"type": "tool_result", "tool_use_id": "c2", "content": "print(2)"},
        {"type": "tool_result", "tool_use_id": "c3", "content": "print(3)", "is_error": True},
    ]
    assert messages[6]["content"][0]["content"] == "(no output)"  # the API refuses empty content


def test_earlier_steps_are_byte_identical_in_every_later_request() -> None:
    log = three_step_turn()
    requests = [log.request(point) for point in log.points]
    assert len(requests) == 4
    for earlier, later in pairwise(requests):
        assert dumped(later["system"]) == dumped(earlier["system"])
        assert dumped(later["tools"]) == dumped(earlier["tools"])
        sent = earlier["messages"]
        assert [dumped(m) for m in later["messages"][: len(sent)]] == [dumped(m) for m in sent]
    for first, last in pairwise(requests):
        assert len(last["messages"]) == len(first["messages"]) + 2  # one step appended


def test_breakpoints_sit_on_the_system_prompt_the_newest_step_and_the_previous_end() -> None:
    log = three_step_turn()
    paths = [breakpoint_paths(log.request(point)) for point in log.points]
    assert paths[0] == ["system[0]", "messages[0].content[0]"]
    assert paths[1] == ["system[0]", "messages[0].content[0]", "messages[2].content[0]"]
    assert paths[2] == ["system[0]", "messages[2].content[0]", "messages[4].content[1]"]
    assert paths[3] == ["system[0]", "messages[4].content[1]", "messages[6].content[0]"]
    request = log.request(log.points[1])
    assert request["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(request["tools"])  # the system marker caches them


def test_the_request_body_is_complete_and_in_a_fixed_order() -> None:
    spec = RequestSpec("m", 99, "sys", (), {"type": "adaptive"})
    log = Log().add("t", 0, e.user_text("hi", "u"))
    request = compose_request(log.entries, spec)
    assert list(request) == ["model", "max_tokens", "system", "messages", "thinking", "stream"]
    assert request["stream"] is True
    assert request["thinking"] == {"type": "adaptive"}
    assert "tools" not in request


def test_composing_never_mutates_the_log_or_the_spec() -> None:
    log = three_step_turn()
    before = [json.dumps(dict(entry.data)) for entry in log.entries]
    tools_before = json.dumps(SPEC.tools)
    request = log.request(len(log.entries))
    request["tools"][0]["name"] = "changed"
    request["messages"][0]["content"][0]["text"] = "changed"
    assert [json.dumps(dict(entry.data)) for entry in log.entries] == before
    assert json.dumps(SPEC.tools) == tools_before
    messages = wire_messages(log.entries)
    marked = place_breakpoints(messages)
    assert "cache_control" not in json.dumps(messages)
    assert "cache_control" in json.dumps(marked)


def test_a_signed_thinking_block_is_kept_even_when_empty() -> None:
    log = Log().add("t", 0, e.user_text("q", "u"))
    log.add("t", 1, e.thinking("", "sig-empty", "m1"))
    log.add("t", 1, e.thinking("unsigned thoughts", "", "m2"))
    log.add("t", 1, e.redacted_thinking("opaque"))
    log.add("t", 1, e.tool_call("c", "read_file", {}))
    log.add("t", 1, e.tool_result("c", "read_file", "x"))
    assistant = wire_messages(log.entries)[1]
    assert assistant["content"][:2] == [
        {"type": "thinking", "thinking": "", "signature": "sig-empty"},
        {"type": "redacted_thinking", "data": "opaque"},
    ]
    assert "unsigned thoughts" not in json.dumps(assistant)


def test_a_mid_turn_prompt_follows_the_step_results_as_its_own_message() -> None:
    log = Log().add("t", 0, e.user_text("first", "u1"))
    log.add("t", 1, e.tool_call("c", "read_file", {"path": "a"}))
    log.add("t", 1, e.tool_result("c", "read_file", "A"))
    log.add("t", 1, e.user_text("and also this", "u2"))
    messages = wire_messages(log.entries)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[2]["content"][0]["type"] == "tool_result"
    assert messages[3]["content"] == [{"type": "text", "text": "and also this"}]
    assert breakpoint_paths(compose_request(log.entries, SPEC))[-1] == "messages[3].content[0]"


def test_consecutive_prompts_become_one_user_message() -> None:
    log = Log().add("t1", 0, e.user_text("one", "u1"))
    log.add("t1", 1, e.system_note("cancelled"))
    log.add("t2", 0, e.user_text("two", "u2"))
    (message,) = wire_messages(log.entries)
    assert message == {
        "role": "user",
        "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
    }


def test_errors_and_notes_are_display_only_and_a_refused_turn_leaves_the_context() -> None:
    log = Log().add("t1", 0, e.user_text("fine", "u1"))
    log.add("t1", 1, e.assistant_text("ok", "m1"))
    log.add("t1", 1, e.error("The API failed", "x1", 500))
    log.add("t2", 0, e.user_text("something refused", "u2"))
    log.add("t2", 1, e.assistant_text("I will not", "m2"))
    log.add("t2", 1, e.system_note("refusal", "declined", "n1"))
    log.add("t3", 0, e.user_text("next", "u3"))
    texts = json.dumps(wire_messages(log.entries))
    assert "The API failed" not in texts and "declined" not in texts
    assert "something refused" not in texts and "I will not" not in texts
    assert [m["role"] for m in wire_messages(log.entries)] == ["user", "assistant", "user"]


def test_a_tool_call_without_a_result_gets_an_error_result_and_orphans_are_dropped() -> None:
    log = Log().add("t1", 0, e.user_text("go", "u1"))
    log.add("t1", 1, e.tool_call("a", "read_file", {}))
    log.add("t1", 1, e.tool_call("b", "read_file", {}))
    log.add("t1", 1, e.tool_result("a", "read_file", "A"))
    log.add("t1", 1, e.tool_result("zzz", "read_file", "orphan"))
    log.add("t2", 0, e.user_text("after a crash", "u2"))
    log.add("t2", 1, e.tool_call("c", "read_file", {}))
    messages = wire_messages(log.entries)
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
        "user",
    ]
    assert [b["tool_use_id"] for b in messages[2]["content"]] == ["a", "b"]
    assert messages[2]["content"][1]["content"] == MISSING_RESULT
    assert "orphan" not in json.dumps(messages)
    assert messages[5]["content"][0]["tool_use_id"] == "c"


def test_blank_text_is_not_sent() -> None:
    log = Log().add("t", 0, e.user_text("q", "u"))
    log.add("t", 1, e.assistant_text("  \n", "m1"))
    log.add("t", 1, e.assistant_text("real", "m2"))
    assert wire_messages(log.entries)[1]["content"] == [{"type": "text", "text": "real"}]


def test_the_naive_builder_regroups_and_breaks_the_prefix() -> None:
    log = three_step_turn()
    ours = [log.request(p)["messages"] for p in log.points]
    naive = [naive_request(log.entries[:p], SPEC)["messages"] for p in log.points]
    assert [len(m) for m in naive] == [1, 3, 3, 3]
    # The naive request of step 3 does not start with what step 2 sent; ours always does.
    assert dumped(naive[2][1]) != dumped(naive[1][1])
    assert all(dumped(ours[2][i]) == dumped(ours[1][i]) for i in range(len(ours[1])))
    # The same blocks, grouped differently.
    flat = sorted(json.dumps(b) for m in without_breakpoints(ours[-1]) for b in m["content"])
    naive_flat = sorted(json.dumps(b) for m in without_breakpoints(naive[-1]) for b in m["content"])
    assert flat == naive_flat


def test_entries_are_checked_and_canonical() -> None:
    with pytest.raises(ValueError, match="role"):
        make_entry(1, "t", 0, Draft("robot", "text", {}))
    with pytest.raises(ValueError, match="type"):
        make_entry(1, "t", 0, Draft("user", "poem", {}))
    entry = make_entry(1, "t", 0, e.tool_call("c", "x", {"n": (1, 2)}))
    assert entry.data["input"] == {"n": [1, 2]}  # as it reads back from the log
    assert entry.message_id is None
    assert make_entry(2, "t", 0, e.user_text("q", "u9")).message_id == "u9"


# Property: appending never changes what was sent ---------------------------------------------

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)
thinking_blocks = st.builds(
    lambda text, signed: e.thinking(text, "sig" if signed else "", "m"), texts, st.booleans()
)
text_blocks = st.builds(lambda text: e.assistant_text(text, "m"), texts)
prompts = texts.map(lambda text: text if text.strip() else f"q{text}")
"""What a user sends: never blank (the agent refuses a blank prompt before it is logged)."""


@st.composite
def conversations(draw: st.DrawFn) -> Log:
    """A log of whole turns, with the model-call points an agent would have."""
    log = Log()
    calls = 0
    for turn_number in range(draw(st.integers(1, 3))):
        turn = f"t{turn_number}"
        log.add(turn, 0, e.user_text(draw(prompts), "u")).call()
        steps = draw(st.integers(1, 4))
        for step in range(1, steps + 1):
            if draw(st.integers(0, 9)) == 0:  # cancelled before anything sealed
                log.add(turn, step, e.system_note("cancelled"))
                break
            for draft in draw(st.lists(st.one_of(thinking_blocks, text_blocks), max_size=3)):
                log.add(turn, step, draft)
            tools = 0 if step == steps else draw(st.integers(0, 3))
            ids = []
            for _ in range(tools):
                calls += 1
                ids.append(f"c{calls}")
                log.add(turn, step, e.tool_call(ids[-1], "read_file", {"path": draw(texts)}))
            for call_id in ids:
                log.add(
                    turn,
                    step,
                    e.tool_result(call_id, "read_file", draw(texts), draw(st.booleans())),
                )
            if draw(st.booleans()):
                log.add(turn, step, e.error("oops", "x"))
            if ids and draw(st.integers(0, 3)) == 0:
                log.add(turn, step, e.user_text(draw(prompts), "u"))
            if not ids and step < steps:
                break
            if step < steps:
                log.call()
    return log


@given(conversations())
def test_appending_never_changes_what_earlier_requests_sent(log: Log) -> None:
    requests = [log.request(point) for point in log.points]
    for index, earlier in enumerate(requests):
        sent = without_breakpoints(earlier["messages"])
        for later in requests[index + 1 :]:
            now = without_breakpoints(later["messages"])
            assert len(now) >= len(sent)
            assert [json.dumps(m) for m in now[: len(sent) - 1]] == [
                json.dumps(m) for m in sent[:-1]
            ]
            last, grown = sent[-1], now[len(sent) - 1]
            assert grown["role"] == last["role"]
            assert grown["content"][: len(last["content"])] == last["content"]
            assert later["system"] == earlier["system"] and later["tools"] == earlier["tools"]


@given(conversations())
def test_requests_are_valid_conversations(log: Log) -> None:
    for point in log.points:
        request = log.request(point)
        messages = request["messages"]
        assert messages[0]["role"] == "user" and messages[-1]["role"] == "user"
        for before, after in pairwise(messages):
            calls = [b["id"] for b in before["content"] if b["type"] == "tool_use"]
            if calls:  # every tool call is answered, first thing, in the next message
                assert after["role"] == "user"
                results = [b["tool_use_id"] for b in after["content"] if b["type"] == "tool_result"]
                assert results == calls
            assert all(m["content"] for m in messages)
        marks = breakpoint_paths(request)
        assert marks[0] == "system[0]" and 2 <= len(marks) <= 3
        assert marks[-1].startswith(f"messages[{len(messages) - 1}]")
        for path in marks[1:]:
            index = int(path.split("[")[1].split("]")[0])
            assert messages[index]["role"] == "user"


@pytest.mark.parametrize(
    ("model", "version"),
    [
        ("claude-sonnet-4-6", (4, 6)),
        ("claude-opus-4-6", (4, 6)),
        ("claude-opus-4-7", (4, 7)),
        ("claude-haiku-4-5", (4, 5)),
        ("claude-haiku-4-5-20251001", (4, 5)),
        ("claude-opus-4-20250514", (4, 0)),
        ("claude-opus-4-1-20250805", (4, 1)),
        ("claude-3-7-sonnet-20250219", (3, 7)),
        ("claude-3-haiku-20240307", (3, 0)),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", (4, 5)),
        ("claude-haiku-4-5@20251001", (4, 5)),
        ("claude-sonnet-5", (5, 0)),
        ("my-gateway-alias", None),
    ],
)
def test_the_model_version_is_read_from_any_id_form(
    model: str, version: tuple[int, int] | None
) -> None:
    assert model_version(model) == version


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-6", {"type": "adaptive"}),
        ("claude-opus-4-6", {"type": "adaptive"}),
        ("claude-opus-4-7", {"type": "adaptive"}),
        ("claude-sonnet-5", {"type": "adaptive"}),
        ("my-gateway-alias", {"type": "adaptive"}),
        ("claude-haiku-4-5", {"type": "enabled", "budget_tokens": 12000}),
        ("claude-sonnet-4-5-20250929", {"type": "enabled", "budget_tokens": 12000}),
        ("claude-3-7-sonnet-20250219", {"type": "enabled", "budget_tokens": 12000}),
    ],
)
def test_thinking_is_adaptive_on_the_newest_models_and_a_budget_before(
    model: str, expected: dict[str, Any]
) -> None:
    assert thinking_config(model, "adaptive", 16000) == expected
    assert thinking_config(model, "off", 16000) is None


@given(st.integers(min_value=1, max_value=200_000))
def test_a_thinking_budget_is_one_the_api_takes(max_tokens: int) -> None:
    config = thinking_config("claude-haiku-4-5", "adaptive", max_tokens)
    if max_tokens <= MIN_THINKING_BUDGET:
        assert config is None  # no room for the smallest budget: thinking stays off
    else:
        assert config is not None and config["type"] == "enabled"
        assert MIN_THINKING_BUDGET <= config["budget_tokens"] < max_tokens


def test_the_thinking_parameter_goes_into_the_request() -> None:
    log = three_step_turn()
    on = replace(SPEC, thinking=thinking_config("claude-haiku-4-5", "on", 4000))
    request = compose_request(log.entries, on)
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert "thinking" not in compose_request(log.entries, SPEC)
