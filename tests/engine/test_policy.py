"""Cockpit's permission policy: pure rules, the config file, and decisions recorded as rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from cockpit.engine.policy import (
    DEFAULT_RULES,
    Policy,
    PolicyError,
    decide,
    load_policy,
    parse_policy,
)
from tests.support.engine_helpers import open_engine, rows_of


def test_the_defaults_allow_reads_and_ask_for_changes() -> None:
    policy = Policy()
    assert policy.action("read") == "allow"
    assert policy.action("edit") == "ask"
    assert policy.action("execute") == "ask"
    assert policy.action("brand-new-kind") == "ask"


def test_a_read_outside_the_root_is_asked(tmp_path: Path) -> None:
    inside = {"kind": "read", "locations": [{"path": str(tmp_path / "a.txt")}]}
    outside = {"kind": "read", "locations": [{"path": "/etc/passwd"}]}
    relative_escape = {"kind": "read", "locations": [{"path": "../x"}]}
    assert decide(Policy(), inside, tmp_path, "global").action == "allow"
    assert decide(Policy(), outside, tmp_path, "global").action == "ask"
    assert decide(Policy(), relative_escape, tmp_path, "global").action == "ask"


def test_session_overrides_win_and_are_named(tmp_path: Path) -> None:
    policy = Policy().with_overrides({"edit": "allow", "execute": "bogus"})
    decision = decide(policy, {"kind": "edit"}, tmp_path, "session")
    assert (decision.action, decision.reason) == ("allow", "session policy: edit = allow")
    assert policy.action("execute") == "ask"


def test_the_policy_file(tmp_path: Path) -> None:
    assert load_policy(tmp_path) == (Policy(), None)
    (tmp_path / "policy.toml").write_text('[permissions]\nedit = "reject"\nexecute = "allow"\n')
    policy, problem = load_policy(tmp_path)
    assert problem is None
    assert policy.rules == {**DEFAULT_RULES, "edit": "reject", "execute": "allow"}
    (tmp_path / "policy.toml").write_text('[permissions]\nedit = "maybe"\n')
    policy, problem = load_policy(tmp_path)
    assert policy == Policy()
    assert problem is not None and "edit = 'maybe'" in problem and "policy.toml" in problem
    with pytest.raises(PolicyError, match="unknown tool kind 'edits'"):
        parse_policy('[permissions]\nedits = "allow"\n', "x")


async def test_a_session_policy_answers_and_the_row_says_which_rule(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        record = await engine.create_session("demo", project)
        await engine.set_session_policy(record.id, "edit", "allow")
        assert await engine.prompt(record.id, "permission") == "end_turn"
        assert recorder.asked == []
        decision = next(r for r in await rows_of(engine, record.id) if r.kind == "permission")
        assert decision.text == "Allowed once: Write demo-notes.md (session policy: edit = allow)"
        assert decision.payload is not None and decision.payload["decidedBy"] == "policy"
        await engine.set_session_policy(record.id, "edit", None)


async def test_a_global_reject_rule(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, recorder):
        engine.policy = Policy().with_overrides({"edit": "reject", "execute": "reject"})
        record = await engine.create_session("demo", project)
        assert await engine.prompt(record.id, "tools") == "end_turn"
        decisions = [r.text for r in await rows_of(engine, record.id) if r.kind == "permission"]
        assert decisions == [
            "Rejected: Write demo-notes.md (global policy: edit = reject)",
            "Rejected: Run a command (global policy: execute = reject)",
        ]
        assert not (project / "demo-notes.md").exists()
        assert recorder.asked == []
