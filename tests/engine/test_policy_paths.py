"""Where a read acts, for the "allow reads inside the root" rule: locations, and the paths
an agent puts only in its raw input (agents send `locations: []`); and the `/policy`
command's rules (kinds and actions checked, the rules in force listed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.policy import (
    Policy,
    decide,
    describe_rules,
    named_paths,
    raw_paths,
    rule_set,
    session_rules,
)
from cockpit.policy_rule import ACTIONS, KINDS, check_rule, parse_rule
from tests.support.engine_helpers import open_engine

ROOT = Path("/work/project")


def read(raw: dict[str, Any] | None = None, locations: list[Any] | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"kind": "read", "locations": locations or []}
    if raw is not None:
        call["rawInput"] = raw
    return call


def action(call: dict[str, Any], root: Path = ROOT) -> str:
    return decide(Policy(), call, root, "global").action


def test_a_read_that_names_no_location_is_asked() -> None:
    """The audit's case: a read of /etc/shadow named only in rawInput, `locations: []`."""
    assert action(read({"path": "/etc/shadow"})) == "ask"
    assert action(read({})) == "ask"
    assert action(read()) == "ask"
    assert action({"kind": "read"}) == "ask"
    search = {"kind": "search", "locations": [], "rawInput": {"pattern": "password"}}
    assert action(search) == "ask"
    decision = decide(Policy(), read({}), ROOT, "global")
    assert decision.reason == "read with no location"
    decision = decide(Policy(), read({"path": "/etc/shadow"}), ROOT, "global")
    assert decision.reason == "read outside the session's folder"


@pytest.mark.parametrize(
    "key", ["path", "file_path", "abs_path", "filePath", "absolute_path", "dir_path", "cwd"]
)
def test_paths_in_raw_input_are_where_a_read_acts(key: str) -> None:
    assert action(read({key: str(ROOT / "src/a.py")})) == "allow"
    assert action(read({key: "src/a.py"})) == "allow"  # relative: from the root
    assert action(read({key: "/etc/passwd"})) == "ask"
    assert action(read({key: "../elsewhere/a.py"})) == "ask"


def test_every_path_must_be_inside() -> None:
    inside = str(ROOT / "a.txt")
    assert action(read({"paths": [inside, str(ROOT / "b.txt")]})) == "allow"
    assert action(read({"paths": [inside, "/etc/passwd"]})) == "ask"
    # A location inside does not excuse a raw path outside, nor the other way round.
    assert action(read({"path": "/etc/passwd"}, [{"path": inside}])) == "ask"
    assert action(read({"path": inside}, [{"path": "/etc/passwd"}])) == "ask"
    assert action(read({"options": {"file_path": "/etc/passwd"}}, [{"path": inside}])) == "ask"
    assert action(read(None, [{"path": inside, "line": 3}])) == "allow"


def test_a_link_out_of_the_root_is_outside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "out").symlink_to("/etc")
    assert action(read({"path": str(root / "out/passwd")}), root) == "ask"
    assert action(read({"path": str(root / "in.txt")}), root) == "allow"


def test_raw_paths_takes_path_values_only() -> None:
    raw = {
        "file_path": "/a",
        "paths": ["/b", 3, ""],
        "content": "/not/a/path/key",
        "nested": {"filePath": "/c", "deeper": {"path": "/d"}},
        "path-like": None,
    }
    assert raw_paths(raw) == ["/a", "/b", "/c", "/d"]
    assert raw_paths("not a mapping") == []
    assert named_paths({"locations": [{"path": "/x"}, "junk", {"line": 2}]}) == ["/x"]


def test_other_kinds_are_not_affected() -> None:
    assert action({"kind": "edit", "locations": []}) == "ask"
    assert action({"kind": "think", "locations": []}) == "allow"
    allowing = Policy().with_overrides({"edit": "allow"})
    edit = {"kind": "edit", "locations": [], "rawInput": {"path": "/etc/x"}}
    assert decide(allowing, edit, ROOT, "session").action == "allow"


SEGMENT = st.sampled_from(["a", "b", "..", ".", "src", "x.py"])
RELATIVE = st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/".join(parts))
PATH = st.one_of(
    RELATIVE,
    RELATIVE.map(lambda p: str(ROOT / p)),
    RELATIVE.map(lambda p: "/etc/" + p),
)
KEY = st.sampled_from(["path", "file_path", "abs_path", "filePath", "paths"])


def truly_inside(path: str) -> bool:
    """Worked out without the module: resolve `..` by hand from the root."""
    full = path if path.startswith("/") else f"{ROOT}/{path}"
    parts: list[str] = []
    for part in full.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    resolved = "/" + "/".join(parts)
    return resolved == str(ROOT) or resolved.startswith(f"{ROOT}/")


@given(
    raw=st.dictionaries(KEY, st.one_of(PATH, st.lists(PATH, max_size=3)), max_size=3),
    locations=st.lists(PATH.map(lambda p: {"path": p}), max_size=3),
    kind=st.sampled_from(["read", "search"]),
)
def test_a_read_is_allowed_only_when_it_names_places_all_inside(
    raw: dict[str, Any], locations: list[dict[str, str]], kind: str
) -> None:
    assert not os.path.exists(ROOT)  # no links to follow: the hand-worked answer holds
    call = {"kind": kind, "rawInput": raw, "locations": locations}
    paths = [loc["path"] for loc in locations]
    for value in raw.values():
        paths.extend(value if isinstance(value, list) else [value])
    expected = "allow" if paths and all(truly_inside(p) for p in paths) else "ask"
    assert decide(Policy(), call, ROOT, "global").action == expected


# --- /policy ---------------------------------------------------------------------------


def test_a_rule_names_a_real_kind_and_action() -> None:
    with pytest.raises(ValueError, match="No tool kind 'exec'; the kinds are: read, edit"):
        check_rule("exec", "allow")
    with pytest.raises(ValueError, match="Use one of: allow, ask, reject"):
        check_rule("edit", "maybe")
    check_rule("execute", "allow")
    check_rule("execute", None)
    assert parse_rule("") is None
    assert parse_rule("  ") is None
    assert parse_rule("Execute ALLOW") == ("execute", "allow")
    assert parse_rule("edit") == ("edit", None)
    with pytest.raises(ValueError, match="No tool kind"):
        parse_rule("exec allow")
    with pytest.raises(ValueError, match="Use /policy KIND"):
        parse_rule("edit allow now")


def test_the_rules_in_force_are_listed_with_the_sessions_own() -> None:
    text = describe_rules(Policy().with_overrides({"fetch": "reject"}), {"edit": "allow"})
    assert text.splitlines() == [
        "allow: read (in the folder), edit (this session), search (in the folder), think",
        "ask: delete, move, execute, switch_mode, other",
        "reject: fetch",
        "Unmarked rules are global (policy.toml).",
    ]
    assert rule_set(Policy(), "edit", "allow") == "This session: edit = allow"
    assert rule_set(Policy(), "edit", None) == "This session: edit follows the global rule (ask)"
    assert session_rules({"policy": {"edit": "allow", "exec": "allow", "read": "x"}}) == {
        "edit": "allow"
    }
    assert session_rules(None) == session_rules({"policy": "junk"}) == {}


@given(overrides=st.dictionaries(st.sampled_from(KINDS), st.sampled_from(ACTIONS)))
def test_every_kind_is_listed_once_under_the_action_in_force(overrides: dict[str, str]) -> None:
    policy = Policy()
    lines = describe_rules(policy, overrides).splitlines()[:-1]
    listed: dict[str, str] = {}
    for line in lines:
        name, _, kinds = line.partition(": ")
        for label in kinds.split(", ") if kinds != "nothing" else []:
            listed[label.split(" ")[0]] = name
    assert listed == {kind: overrides.get(kind, policy.action(kind)) for kind in KINDS}


async def test_the_engine_refuses_a_rule_that_would_do_nothing(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    async with open_engine(tmp_path / "home") as (engine, _):
        record = await engine.create_session("demo", project)
        with pytest.raises(ValueError, match="No tool kind 'exec'"):
            await engine.set_session_policy(record.id, "exec", "allow")
        with pytest.raises(ValueError, match="Use one of"):
            await engine.set_session_policy(record.id, "edit", "yes")
        await engine.set_session_policy(record.id, "edit", "allow")
        stored = (await engine.session(record.id)).info or {}
        assert stored["policy"] == {"edit": "allow"}
