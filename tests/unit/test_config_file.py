"""Config files read when they are used: the pure rule (`advance`: what is in force and what
is reported after each look) and the reader over real files (`ConfigFile`), with each of
the three files that use it: `agents.toml`, `policy.toml`, `settings.json`."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.config_file import (
    DEFAULTS,
    KEPT,
    NOT_LOOKED,
    Broken,
    ConfigError,
    ConfigFile,
    Identity,
    Parsed,
    Version,
    advance,
)
from cockpit.engine.policy import DEFAULT_RULES, Policy, policy_file
from cockpit.engine.registry import AgentsFile
from cockpit.ui.settings import Settings, SettingsFile

# -- the pure rule ------------------------------------------------------------------------------


def never(_: object = None) -> Parsed[str] | Broken:
    raise AssertionError("the file was read though it had not changed")


def test_an_unchanged_file_is_not_read_and_nothing_is_reported() -> None:
    seen = Identity(1, 2, 3, 4)
    current = Version(seen, "value", good=True)
    assert advance(current, Identity(1, 2, 3, 4), never) == (current, ())


def test_a_broken_version_keeps_the_last_good_value_and_is_reported_once() -> None:
    first, _ = advance(Version(NOT_LOOKED, "defaults"), Identity(1, 1, 1, 1), lambda: Parsed("a"))
    broken, told = advance(first, Identity(1, 1, 2, 2), lambda: Broken("f.toml:3: oops"))
    assert broken.value == "a" and broken.broken
    assert told == ("f.toml:3: oops (the version read before stays in force)",)
    assert broken.problems == told
    again, told_again = advance(broken, Identity(1, 1, 2, 2), never)
    assert (again, told_again) == (broken, ())


def test_with_no_good_version_ever_the_defaults_hold_and_say_so() -> None:
    version, told = advance(
        Version(NOT_LOOKED, "defaults"), Identity(1, 1, 1, 1), lambda: Broken("f:1: bad")
    )
    assert version.value == "defaults" and not version.good
    assert told == ("f:1: bad (the defaults apply until it is fixed)",)


def test_a_vanished_file_is_a_change() -> None:
    good = Version(Identity(1, 1, 1, 1), "a", good=True)
    gone, told = advance(good, None, lambda: Parsed("defaults"))
    assert (gone.value, gone.seen, told) == ("defaults", None, ())


def test_warnings_of_a_good_version_are_reported_once_and_it_is_used() -> None:
    version, told = advance(
        Version(NOT_LOOKED, "x"), Identity(1, 1, 1, 1), lambda: Parsed("y", ("f:2: unknown",))
    )
    assert (version.value, version.broken, told) == ("y", False, ("f:2: unknown",))
    assert advance(version, Identity(1, 1, 1, 1), never)[1] == ()


LOOKS = st.lists(
    st.tuples(
        st.integers(0, 4),  # which version of the file a look finds (0: no file)
        st.one_of(st.none(), st.text(min_size=1, max_size=3)),  # None: that version is broken
    ),
    max_size=30,
)


@given(LOOKS)
def test_what_is_in_force_and_what_is_reported_over_any_series_of_looks(
    looks: list[tuple[int, str | None]],
) -> None:
    """However the file changes: each change is read once and nothing else is; a broken
    version is reported exactly once per change to it, a good one never; the value in
    force is the last good version's, else the defaults."""
    current: Version[str] = Version(NOT_LOOKED, "defaults")
    last_seen: object = NOT_LOOKED
    in_force, good_ever, reads, changes = "defaults", False, 0, 0
    for number, content in looks:
        seen = None if number == 0 else Identity(0, number, 0, 0)

        def outcome(content: str | None = content, number: int = number) -> Parsed[str] | Broken:
            nonlocal reads
            reads += 1
            if number == 0:
                return Parsed("defaults")
            return Parsed(content) if content is not None else Broken(f"f:{number}: bad")

        current, told = advance(current, seen, outcome)
        if seen == last_seen:
            assert told == ()
        elif number != 0 and content is None:
            changes += 1
            assert told == (f"f:{number}: bad ({KEPT if good_ever else DEFAULTS})",)
            assert current.broken
        else:
            changes += 1
            in_force, good_ever = (content or "") if number else "defaults", True
            assert told == () and not current.broken
        last_seen = seen
        assert current.value == in_force
    assert reads == changes


@given(st.lists(st.text(max_size=40), max_size=8))
def test_a_policy_file_never_good_means_the_default_rules(texts: list[str]) -> None:
    """Whatever broken versions come, with no good one ever read the rules are the
    defaults, which ask before any change: never anything looser."""
    current: Version[Policy] = Version(NOT_LOOKED, Policy())
    for number, text in enumerate(texts, start=1):
        current, _ = advance(current, Identity(0, number, 0, 0), partial(Broken, text or "x"))
        assert current.value.rules == DEFAULT_RULES
        assert all(current.value.action(k) == "ask" for k in ("edit", "execute", "delete"))


# -- the reader over real files ------------------------------------------------------------------


def counting_parse(calls: list[str]) -> Any:
    def parse(text: str, origin: str, last: object) -> Parsed[str]:
        calls.append(text)
        if text.startswith("!"):
            raise ConfigError(f"{origin}:1: starts with !")
        return Parsed(text)

    return parse


def test_the_file_is_read_again_only_when_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    calls: list[str] = []
    config = ConfigFile(path, counting_parse(calls), "none")
    assert config.read() == ("none", ())
    path.write_text("one")
    assert config.read() == ("one", ())
    for _ in range(5):
        assert config.read() == ("one", ())
    assert calls == ["one"]
    path.write_text("two!")  # another size: another version
    assert config.read() == ("two!", ())
    assert calls == ["one", "two!"]


def test_a_file_replaced_with_the_same_size_and_time_is_still_seen(tmp_path: Path) -> None:
    """An editor that saves by writing a new file and renaming it over the old one."""
    path = tmp_path / "c.txt"
    config = ConfigFile(path, counting_parse([]), "none")
    path.write_text("aaa")
    assert config.read()[0] == "aaa"
    stamp = path.stat().st_mtime_ns
    new = tmp_path / "c.txt.new"
    new.write_text("bbb")
    os.utime(new, ns=(stamp, stamp))
    os.replace(new, path)
    assert config.read()[0] == "bbb"


def test_a_broken_edit_is_told_once_and_the_last_good_version_stays(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    config = ConfigFile(path, counting_parse([]), "none")
    path.write_text("good")
    config.read()
    path.write_text("!broken")
    value, told = config.read()
    assert value == "good"
    assert told == (f"{path}:1: starts with ! (the version read before stays in force)",)
    assert config.read() == ("good", ())
    assert config.problems == told
    path.write_text("!broken again")  # another change: told again
    assert config.read()[1] != ()
    path.unlink()  # gone: the defaults, and nothing wrong
    assert config.read() == ("none", ())
    assert not config.problems


def test_a_file_that_is_no_text_or_no_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "c.txt"
    config = ConfigFile(path, counting_parse([]), "none")
    path.write_bytes(b"ok\n\xff\n")
    value, told = config.read()
    assert value == "none"
    assert told[0].startswith(f"{path}:2: cannot be read: it is not UTF-8 text")
    path.unlink()
    path.mkdir()
    assert config.read()[1][0].startswith(f"{path}: cannot be read:")
    assert config.read()[1] == (), "told again though nothing changed"


# -- agents.toml -----------------------------------------------------------------------------------

BENCH = '[agents.bench]\ncommand = ["{python}", "{agents}/demo_agent.py"]\ntitle = "Bench"\n'


def test_agents_added_and_removed_are_known_at_once(tmp_path: Path) -> None:
    agents = AgentsFile(tmp_path)
    registry, told = agents.read()
    assert "bench" not in registry.agents and told == ()
    (tmp_path / "agents.toml").write_text(BENCH)
    registry, told = agents.read()
    assert registry.get("bench").title == "Bench" and told == ()
    (tmp_path / "agents.toml").write_text("")
    assert "bench" not in agents.read()[0].agents
    assert "demo" in agents.read()[0].agents


def test_a_broken_agents_file_keeps_the_agents_read_before(tmp_path: Path) -> None:
    user = tmp_path / "agents.toml"
    agents = AgentsFile(tmp_path)
    user.write_text(BENCH)
    agents.read()
    user.write_text(BENCH + "\n[agents.other\n")
    registry, told = agents.read()
    assert registry.get("bench").title == "Bench"
    assert told == (
        f"{user}:5: not valid TOML: Expected ']' at the end of a table declaration "
        "(at line 5, column 14) (the agents read before stay as they were)",
    )
    assert agents.read()[1] == ()
    assert registry.problems == list(told)


def test_an_entry_broken_by_an_edit_keeps_its_last_good_version(tmp_path: Path) -> None:
    user = tmp_path / "agents.toml"
    agents = AgentsFile(tmp_path)
    user.write_text(BENCH)
    agents.read()
    user.write_text('[agents.bench]\ncommand = []\n\n[agents.new]\ncommand = ["x"]\n')
    registry, told = agents.read()
    assert registry.get("bench").title == "Bench"
    assert registry.get("new").command == ("x",)
    assert told == (
        f"{user}:1: agent 'bench': command must be a non-empty list of strings; the entry "
        "read before stays in force",
    )


def test_a_broken_agents_file_never_good_leaves_the_bundled_agents(tmp_path: Path) -> None:
    (tmp_path / "agents.toml").write_text("[agents.x\n")
    registry, told = AgentsFile(tmp_path).read()
    assert "demo" in registry.agents
    assert told[0].endswith("(only the bundled agents are available)")


# -- policy.toml -----------------------------------------------------------------------------------


def test_the_policy_is_read_when_used_and_a_broken_edit_keeps_the_rules(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    policy = policy_file(tmp_path)
    assert policy.read() == (Policy(), ())
    path.write_text('[permissions]\nedit = "allow"\n')
    assert policy.read()[0].action("edit") == "allow"
    path.write_text('[permissions]\nedit = "allow"\nexecute = "sometimes"\n')
    rules, told = policy.read()
    assert rules.action("edit") == "allow" and rules.action("execute") == "ask"
    assert told == (
        f"{path}:3: execute = 'sometimes'; use one of allow, ask, reject (the rules read "
        "before stay in force)",
    )
    assert policy.read()[1] == ()


def test_a_policy_never_good_is_the_defaults_never_allow(tmp_path: Path) -> None:
    (tmp_path / "policy.toml").write_text('[permissions]\nedit = "allow"\nexecute = "allow\n')
    rules, told = policy_file(tmp_path).read()
    assert rules == Policy()
    assert rules.action("edit") == rules.action("execute") == "ask"
    assert told[0].startswith(f"{tmp_path / 'policy.toml'}:3: not valid TOML")
    assert told[0].endswith("(the default rules apply: anything that changes something is asked)")


# -- settings.json ---------------------------------------------------------------------------------


def test_saving_one_setting_keeps_what_the_file_says_now(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = SettingsFile(path)
    path.write_text('{"theme": "cockpit-dark", "notify": false}')
    assert settings.read() == (Settings(theme="cockpit-dark", notify=False), ())
    # another Cockpit (or the user) changes the file meanwhile
    path.write_text('{"theme": "cockpit-dark", "notify": false, "tool_cards": "always"}')
    settings.save("theme", "cockpit-light")
    assert json.loads(path.read_text()) == {
        "theme": "cockpit-light",
        "notify": False,
        "tool_cards": "always",
    }
    settings.save("last_session", None)
    settings.save("last_session", "s1")
    settings.save("theme", None)
    assert json.loads(path.read_text()) == {
        "notify": False,
        "tool_cards": "always",
        "last_session": "s1",
    }


def test_a_settings_file_that_does_not_parse_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = SettingsFile(path)
    path.write_text('{"notify": false}')
    settings.read()
    path.write_text('{"notify": false,\n "theme": }')
    value, told = settings.read()
    assert value.notify is False
    assert told == (
        f"{path}:2: not valid JSON: Expecting value (the settings read before stay in force)",
    )
    with pytest.raises(ConfigError, match="not valid JSON"):
        settings.save("theme", "cockpit-light")
    assert path.read_text() == '{"notify": false,\n "theme": }'
