"""The wire, pinned: the protocol's method names, the contract's calls (how each reaches
the engine, and its arguments' names), and the JSON of one value of every record and event of the contract,
compared with what is checked in (`tests/data/protocol_golden.json`). A service that runs
on and a client installed after it must still talk: a change here is a change of the
protocol, which bumps `PROTOCOL_VERSION` (and then this file's expectations with it)."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from cockpit import api, protocol
from store.model import Frame

GOLDEN = Path(__file__).parents[1] / "data" / "protocol_golden.json"

WIRE_NAMES = ("HELLO", "CALL", "WATCH", "SHOW", "EVENT", "STATE", "RESYNC", "STOPPED",
              "STATUS", "STOP", "FULL")  # fmt: skip

CHANGED = (
    "the wire changed: a running service and a new client would not understand each other. "
    "If that is meant, bump PROTOCOL_VERSION and write the new expectations in "
    f"{GOLDEN.name} (see `pinned()`)"
)

FRAME = Frame("s-1", "agent:1", 4, "agent", 2, "lo", True, 5, None)
TOOL_FRAME = Frame("s-1", "tool:t1", 5, "tool", 2, "", False, 0, {"status": "completed"})
ROW = api.Row(
    "s-1", 4, "agent:1", "agent", "agent", 2, "hello", None, 5, 1700000000.5, 1700000001.25
)
TOOL_ROW = api.Row(
    "s-1", 5, "tool:t1", "tool", "agent", 2, "", {"toolCallId": "t1", "kind": "edit", "$ref": "#/a"}, 40,
    1700000002.0, 1700000003.0,
)  # fmt: skip
RECORD = api.SessionRecord(
    "s-1", "demo", ("python", "demo.py"), "/home/u/proj", "a title", "ready", "agent-7",
    1700000000.0, 1700000009.0, {"currentModeId": "ask"}, ({"id": "model", "currentValue": "m"},),
    ({"name": "plan"}, {"name": "help"}), {"used": 10}, {"run": True}, True, "a draft",
)  # fmt: skip
FIELD = api.FormField(
    "targets", "choices", "Targets", "where it runs", True, ("linux",), 0.5, 9.5, 1, 40, 1, 2,
    ("linux", "macos"), ("Linux", "macOS"), True,
)  # fmt: skip
FORM = api.Form("Tell me", (FIELD,), "https://example.com/a", "e-1", "Setup")
REQUEST = api.PermissionRequest(
    "p-1", "s-1", {"toolCallId": "t1", "title": "Edit a.py", "kind": "edit"},
    ({"optionId": "allow", "name": "Allow", "kind": "allow_once"},), 1700000004.0, FORM,
)  # fmt: skip
SPEC = api.AgentSpec(
    "demo", ("python", "demo.py"), "Demo", {"DEMO": "1"}, "the bundled demo", "pip install x",
    "empty", 7, "agents.toml", ("GH_TOKEN",), {"missing_file": "empty"},
)  # fmt: skip

MODEL_CALL = api.ModelCall(
    2, "turn-1", 1, 40, "claude-x", "done", "end_turn", 1700000005.0, 1700000006.5,
    {"input_tokens": 10}, {"messages": []}, {"content": []}, None,
)  # fmt: skip

SIGN_IN_METHOD = api.SignInMethod(
    "login", "Log in", "in your terminal", "terminal", ("TOKEN",), ("--login",), {"NO_BROWSER": "1"},
    "https://example.com/keys",
)  # fmt: skip

WORKTREE_STATUS = api.WorktreeStatus("cockpit/t-s-1", 3, 2, 1, False)

SAMPLES: dict[str, Any] = {
    "SessionRecord": RECORD,
    "Row": TOOL_ROW,
    "Page": api.Page((ROW, TOOL_ROW), True),
    "PermissionRequest": REQUEST,
    "Form": FORM,
    "FormField": FIELD,
    "AgentSpec": SPEC,
    "AgentInfo": api.AgentInfo(SPEC, False),
    "FileMatch": api.FileMatch("src/a.py", (0, 4, 5)),
    "FramesEvent": api.FramesEvent("s-1", (FRAME, TOOL_FRAME)),
    "StatusEvent": api.StatusEvent("s-1", "ready", "end_turn", True),
    "PermissionEvent": api.PermissionEvent(REQUEST, True, "allow"),
    "SessionEvent": api.SessionEvent("s-1"),
    "AttentionEvent": api.AttentionEvent("s-1", True),
    "ProblemEvent": api.ProblemEvent(None, "the disk is full"),
    "SavingEvent": api.SavingEvent("the disk is full"),
    "ResyncEvent": api.ResyncEvent("attached again"),
    "LinkEvent": api.LinkEvent(None),
    "ServiceStopped": api.ServiceStopped("stopped by `cockpit service stop`", (2, 40), True),
    "ModelCall": MODEL_CALL,
    "ModelCalls": api.ModelCalls("s-1", "agent-7", "logs/agent-7.db", 3, (MODEL_CALL,)),
    "WorktreeRequest": api.WorktreeRequest("main", "feature", True),
    "RepositoryInfo": api.RepositoryInfo("/home/u/proj", "main", True, ("main", "feature")),
    "ProjectInfo": api.ProjectInfo(
        "/home/u/proj", "npm ci", True, "npm test", False, (".env",), 3, ("`x` is not a setting",)
    ),
    "WorktreeStatus": WORKTREE_STATUS,
    "WorktreeListing": api.WorktreeListing(
        "s-1",
        "a title",
        "/home/u/proj",
        "/home/u/.local/share/cockpit/worktrees/proj/t-s-1",
        "cockpit/t-s-1",
        "main",
        40960,
        WORKTREE_STATUS,
        True,
    ),
    "CleanupItem": api.CleanupItem(
        "s-1",
        "a title",
        "/home/u/.local/share/cockpit/worktrees/proj/t-s-1",
        "cockpit/t-s-1",
        "main",
        40960,
        False,
        ("2 commits not in main", "1 uncommitted file"),
        1700000000.5,
        True,
        True,
    ),
    "Checkpoint": api.Checkpoint("3", 2, "end", "ab" * 20, 1700000007.25, 4),
    "FileChange": api.FileChange(
        "src/a.py", "modified", "old\n", "new\n", readable=True, binary=False, outside=True
    ),
    "RestorePlan": api.RestorePlan(
        "3", ("a.py",), ("b.py",), ("c.py",), (".env",), "A turn is running in this session."
    ),
    "MergeResult": api.MergeResult(
        False, "merge commit", "main", "", ("src/app.py",), "It conflicts: nothing was changed."
    ),
    "Contender": api.Contender(
        "a1b2c3d4", "codex", "ready", 3, 40, 2, "passed", 95.5, 18000, 0.41, "EUR", "archived"
    ),
    "Plan": api.Plan(
        (api.PlanEntry("write the tests", "in_progress", "high"),), 4, "tool", "tests first"
    ),
    "PlanEntry": api.PlanEntry("ship it", "pending", "low"),
    "McpServerState": api.McpServerState("docs", "sse", False, "this agent takes no SSE servers"),
    "SignInMethod": SIGN_IN_METHOD,
    "SignIn": api.SignIn("s-1", "Authentication required", (SIGN_IN_METHOD,), True),
}
"""One value of each record the wire carries, every field set."""


def pinned() -> dict[str, Any]:
    """What the wire is today, as `GOLDEN` holds it."""
    return {
        "protocol": protocol.PROTOCOL_VERSION,
        "tag": protocol.TAG,
        "error_code": protocol.ERROR_CODE,
        "methods": {name: getattr(protocol, name) for name in WIRE_NAMES},
        "calls": {
            name: {"kind": kind.value, "args": arguments(name)}
            for name, kind in sorted(api.METHODS.items())
            if kind is not api.CallKind.LOCAL
        },
        "records": {name: protocol.encode(value) for name, value in SAMPLES.items()},
    }


def arguments(name: str) -> list[str]:
    """The names a call's arguments cross the wire under (`{name, args}`)."""
    parameters = inspect.signature(getattr(api.EngineAPI, name)).parameters
    return [parameter for parameter in parameters if parameter != "self"]


def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def test_every_record_of_the_wire_has_a_sample() -> None:
    assert set(SAMPLES) == set(protocol.RECORDS)
    for name, value in SAMPLES.items():
        assert type(value) is protocol.RECORDS[name]


def test_the_protocol_version_and_method_names_are_the_pinned_ones() -> None:
    now, then = pinned(), golden()
    for part in ("protocol", "tag", "error_code", "methods"):
        assert now[part] == then[part], f"{part}: {CHANGED}"


def test_the_contracts_calls_and_their_arguments_are_the_pinned_ones() -> None:
    assert pinned()["calls"] == golden()["calls"], CHANGED


def test_every_record_is_written_as_pinned() -> None:
    now, then = pinned()["records"], golden()["records"]
    assert set(now) == set(then), CHANGED
    for name in now:
        assert now[name] == then[name], f"{name}: {CHANGED}"


def test_every_pinned_record_is_read_back_as_its_value() -> None:
    """A client reads what a service of the same protocol wrote, and the other way."""
    for name, data in golden()["records"].items():
        assert protocol.decode(data) == SAMPLES[name], name
