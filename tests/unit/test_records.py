"""The records the clients read from stored ACP JSON (`cockpit.records`): each reader turns
what an agent sent into its record, and anything else into the unknown form, never an
exception."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cockpit.api import (
    AgentCommand,
    ConfigOption,
    ConfigValue,
    Cost,
    DiffContent,
    ExitStatus,
    Location,
    Mode,
    Modes,
    PermissionOption,
    PermissionRequest,
    Plan,
    PlanEntry,
    RawOutput,
    TerminalContent,
    TerminalOutput,
    TextContent,
    ToolCall,
    TurnTokens,
    Unknown,
    Usage,
    read_command,
    read_config_option,
    read_modes,
    read_permission_option,
    read_plan,
    read_tool_call,
    read_usage,
)
from cockpit.text.textout import call_line, call_output, plan_checklist

ACP_KEYS = [
    "toolCallId", "title", "kind", "status", "content", "locations", "path", "line", "type",
    "oldText", "newText", "text", "terminalId", "terminalOutput", "output", "truncated",
    "exitStatus", "exitCode", "exit_code", "signal", "rawOutput", "rawInput", "command", "args",
    "stdout", "stderr", "optionId", "name", "id", "currentModeId", "availableModes",
    "currentValue", "options", "value", "category", "description", "input", "hint", "entries",
    "used", "size", "cost", "amount", "currency", "lastTurn", "inputTokens", "outputTokens",
]  # fmt: skip
"""The keys the readers look up, so that generated objects reach every branch."""

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["diff", "content", "terminal", "boolean", "mode", "model", "completed"])
    | st.text(max_size=4)
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(ACP_KEYS) | st.text(max_size=2), children, max_size=5)
    ),
    max_leaves=30,
)


# -- tool calls ---------------------------------------------------------------------------------


def test_a_tool_call_reads_its_content_terminals_and_raw_output() -> None:
    payload = {
        "toolCallId": "call_1",
        "title": "Edit notes.md",
        "kind": "edit",
        "status": "in_progress",
        "locations": [{"path": "/p/notes.md", "line": 3}, {"path": ""}, "junk"],
        "content": [
            {"type": "diff", "path": "/p/notes.md", "oldText": "a\n", "newText": "b\n"},
            {"type": "diff", "path": "/p/new.md", "newText": "new\n"},
            {"type": "content", "content": {"type": "text", "text": "**done**"}},
            {"type": "content", "content": {"type": "image", "data": "..."}},
            {"type": "terminal", "terminalId": "t1"},
            {"type": "other"},
            7,
        ],
        "terminalOutput": {
            "t1": {"output": "ok\n", "truncated": True, "exitStatus": {"exitCode": 0}},
            "t2": "junk",
        },
        "rawOutput": {"stdout": "out\n", "stderr": "", "exit_code": 2},
        "rawInput": {"command": "ls", "args": ["-l", "a b"]},
    }
    assert read_tool_call(payload) == ToolCall(
        id="call_1",
        title="Edit notes.md",
        kind="edit",
        status="in_progress",
        locations=(Location("/p/notes.md", 3),),
        content=(
            DiffContent("/p/notes.md", "a\n", "b\n"),
            DiffContent("/p/new.md", None, "new\n"),
            TextContent("**done**"),
            TerminalContent("t1"),
        ),
        terminals={"t1": TerminalOutput("ok\n", True, ExitStatus(0, None))},
        raw_output=RawOutput(("out\n",), 2),
        command="ls -l 'a b'",
    )


def test_a_tool_call_with_no_payload_yet_is_empty_and_fields_of_the_wrong_type_are_absent() -> None:
    assert read_tool_call(None) == ToolCall()
    odd = {"content": 7, "locations": "x", "terminalOutput": [1], "rawOutput": "", "status": ""}
    assert read_tool_call(odd) == ToolCall()
    assert read_tool_call({"rawOutput": [1]}) == ToolCall(raw_output=RawOutput((), None))
    assert read_tool_call({"rawOutput": "text"}) == ToolCall(raw_output=RawOutput(("text",), None))


def test_a_tool_call_that_is_not_an_object_is_unknown_and_says_so() -> None:
    call = read_tool_call([{"toolCallId": "x"}])
    assert call == Unknown("tool call", "as a list")
    assert call.sentence == "Cockpit cannot read this tool call: it was stored as a list."
    assert call_line(call) == f"[unknown] {call.sentence}"
    assert call_output(call) == ""
    assert read_tool_call("a text") == Unknown("tool call", "as a text")
    assert read_tool_call(True) == Unknown("tool call", "as a truth value")
    assert read_tool_call(3.5) == Unknown("tool call", "as a number")


def test_a_diff_and_a_terminal_read_by_their_records() -> None:
    call = read_tool_call(
        {
            "content": [
                {"type": "diff", "path": "a", "newText": "x"},
                {"type": "terminal", "terminalId": "t"},
            ],
            "terminalOutput": {"t": {"output": "", "exitStatus": {"signal": "SIGKILL"}}},
        }
    )
    assert isinstance(call, ToolCall)
    assert call.diffs == (DiffContent("a", None, "x"),)
    assert call.has_terminal
    assert call.terminal("t") == TerminalOutput("", False, ExitStatus(None, "SIGKILL"))
    assert call.terminal("nope") is None


@given(JSON)
def test_any_json_reads_as_a_tool_call_or_unknown_and_renders(value: Any) -> None:
    call = read_tool_call(value)
    assert isinstance(call, ToolCall | Unknown)
    assert isinstance(call_line(call), str)
    assert isinstance(call_output(call), str)
    if isinstance(call, ToolCall):
        assert all(
            isinstance(item, DiffContent | TextContent | TerminalContent) for item in call.content
        )
        assert isinstance(call.status, str) and call.status


@given(st.dictionaries(st.sampled_from(ACP_KEYS), JSON, max_size=8))
def test_any_object_reads_as_a_tool_call(value: dict[str, Any]) -> None:
    assert isinstance(read_tool_call(value), ToolCall)


# -- permission options -------------------------------------------------------------------------


def test_a_permission_option_reads_its_id_name_and_kind() -> None:
    option = {"optionId": "allow", "name": "Allow once", "kind": "allow_once"}
    assert read_permission_option(option) == PermissionOption("allow", "Allow once", "allow_once")
    assert read_permission_option({"optionId": 3}) == PermissionOption("3", None, "")
    assert read_permission_option({"name": "no id"}) == Unknown(
        "option", "without the fields it needs"
    )
    assert read_permission_option("junk") == Unknown("option", "as a text")


def test_a_request_reads_its_tool_call_and_options_once() -> None:
    request = PermissionRequest(
        "r1",
        "s1",
        {"toolCallId": "c", "title": "Run ls", "kind": "execute", "rawInput": {"command": "ls"}},
        (
            {"optionId": "a", "name": "Allow"},
            {"name": "no id"},
            {"optionId": "r", "kind": "reject_once"},
        ),
        created=0.0,
    )
    assert request.call.command == "ls"
    assert request.call is request.call  # read once
    assert request.choices == (
        PermissionOption("a", "Allow", ""),
        PermissionOption("r", None, "reject_once"),
    )
    assert (request.title, request.kind) == ("Run ls", "execute")
    plain = PermissionRequest("r2", "s1", {}, (), created=0.0)
    assert (plain.title, plain.kind, plain.call) == ("a tool call", "other", ToolCall())


@given(JSON)
def test_any_json_reads_as_an_option_or_unknown(value: Any) -> None:
    assert isinstance(read_permission_option(value), PermissionOption | Unknown)


# -- modes, config options, commands ------------------------------------------------------------


def test_modes_read_their_current_one() -> None:
    modes = read_modes(
        {
            "currentModeId": "plan",
            "availableModes": [{"id": "default", "name": "Default"}, {"id": "plan"}, "junk", {}],
        }
    )
    assert modes == Modes("plan", (Mode("default", "Default"), Mode("plan", None)))
    assert modes.current == Mode("plan", None)
    assert read_modes(None) == Modes() == read_modes([1])
    assert read_modes({"currentModeId": "gone"}).current is None


def test_a_config_option_flattens_its_groups() -> None:
    option = read_config_option(
        {
            "id": "model",
            "name": "Model",
            "type": "select",
            "category": "model",
            "currentValue": "opus",
            "options": [
                {"name": "Anthropic", "options": [{"value": "opus", "name": "Opus"}, "junk"]},
                {"value": "local"},
                7,
            ],
        }
    )
    assert option == ConfigOption(
        "model",
        "Model",
        "select",
        "model",
        "opus",
        (ConfigValue("opus", "Opus"), ConfigValue("local", None)),
    )
    assert isinstance(option, ConfigOption)
    assert option.current_name == "Opus"
    assert option.label == "Model"
    flag = read_config_option({"id": "fast", "type": "boolean", "currentValue": False})
    assert isinstance(flag, ConfigOption)
    assert (flag.current, flag.current_name, flag.label) == (False, "False", "fast")
    assert read_config_option({"name": "no id"}) == Unknown("option", "without the fields it needs")


def test_a_command_reads_its_name_description_and_hint() -> None:
    command = {"name": "review", "description": "Review it", "input": {"hint": "what"}}
    assert read_command(command) == AgentCommand("review", "Review it", "what")
    assert read_command({"name": "x", "input": "junk"}) == AgentCommand("x")
    assert isinstance(read_command({"description": "no name"}), Unknown)
    assert isinstance(read_command(None), Unknown)


@given(JSON)
def test_any_json_reads_as_modes_options_and_commands(value: Any) -> None:
    assert isinstance(read_modes(value), Modes)
    option = read_config_option(value)
    assert isinstance(option, ConfigOption | Unknown)
    if isinstance(option, ConfigOption):
        assert option.current_name is None or isinstance(option.current_name, str)
    assert isinstance(read_command(value), AgentCommand | Unknown)


# -- plans and usage ----------------------------------------------------------------------------


def test_a_plan_reads_its_entries() -> None:
    plan = read_plan({"entries": [{"content": "a", "status": "completed"}, {"content": "b"}, 3]})
    assert plan == Plan((PlanEntry("a", "completed"), PlanEntry("b")))
    assert plan_checklist(plan) == ["[x] a", "[ ] b"]
    assert read_plan(None) == Plan() == read_plan({"entries": "x"})
    unknown = read_plan(["a"])
    assert unknown == Unknown("plan", "as a list")
    assert plan_checklist(unknown) == ["Cockpit cannot read this plan: it was stored as a list."]


def test_usage_reads_numbers_only() -> None:
    usage = read_usage(
        {
            "used": 12300,
            "size": 200000,
            "cost": {"amount": 0.42},
            "lastTurn": {"inputTokens": 10, "outputTokens": True},
        }
    )
    assert usage == Usage(12300, 200000, Cost(0.42), TurnTokens(input=10))
    assert read_usage({"used": "12", "cost": {"amount": "1"}}) == Usage()
    assert read_usage(None) == Usage() == read_usage([1])


@given(JSON)
def test_any_json_reads_as_a_plan_or_unknown_and_as_usage(value: Any) -> None:
    plan = read_plan(value)
    assert isinstance(plan, Plan | Unknown)
    assert all(isinstance(line, str) for line in plan_checklist(plan))
    assert isinstance(read_usage(value), Usage)
