"""The settings store: round trips, atomic private writes, and broken files that give
defaults plus a message instead of an exception; and the typed `Settings` over it, which
ignores values it cannot use and keeps whatever else the file holds."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.paths import settings_path
from cockpit.ui.settings import (
    Settings,
    SettingsFile,
    load_settings,
    save_settings,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_settings_live_in_the_config_folder(isolated_home: Path) -> None:
    assert settings_path() == isolated_home / "config" / "settings.json"
    assert settings_path({"COCKPIT_HOME": "/elsewhere"}) == Path("/elsewhere/config/settings.json")


def test_a_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings: dict[str, Any] = {"theme": "cockpit-light", "width": 42, "nested": {"é": [1, None]}}
    save_settings(path, settings)
    assert load_settings(path) == (settings, None)


def test_saving_replaces_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, {"a": 1, "b": 2})
    save_settings(path, {"b": 3})
    assert load_settings(path) == ({"b": 3}, None)


def test_the_file_is_owner_only_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0o644)
    save_settings(path, {"theme": "cockpit-dark"})
    assert mode(path) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_a_missing_folder_is_created_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "config" / "cockpit" / "settings.json"
    save_settings(path, {"x": True})
    assert mode(path.parent) == 0o700
    assert mode(path) == 0o600
    assert load_settings(path) == ({"x": True}, None)


def test_the_write_is_atomic_through_a_rename_in_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, {"old": 1})
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(source: str | Path, target: str | Path) -> None:
        renames.append((str(source), str(target)))
        assert json.loads(path.read_text(encoding="utf-8")) == {"old": 1}  # untouched till now
        assert json.loads(Path(source).read_text(encoding="utf-8")) == {"new": 2}
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", spy)
    save_settings(path, {"new": 2})
    [(source, target)] = renames
    assert Path(source).parent == tmp_path
    assert target == str(path)
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, {"old": 1})

    def fail(source: str | Path, target: str | Path) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk on fire"):
        save_settings(path, {"new": 2})
    assert load_settings(path) == ({"old": 1}, None)
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_a_value_json_cannot_hold_fails_before_touching_the_disk(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, {"old": 1})
    with pytest.raises(TypeError):
        save_settings(path, {"bad": object()})
    assert load_settings(path) == ({"old": 1}, None)
    assert sorted(os.listdir(tmp_path)) == ["settings.json"]


def test_a_missing_file_is_empty_settings_and_no_message(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "absent.json") == ({}, None)
    assert load_settings(tmp_path / "no" / "folder" / "settings.json") == ({}, None)


@pytest.mark.parametrize(
    ("content", "line", "expected"),
    [
        (b'{"theme": "cockpit-dark",', ":1", "not valid JSON"),
        (b'{\n  "theme": "cockpit-dark",\n  "notify": tru\n}', ":3", "not valid JSON"),
        (b"", ":1", "not valid JSON"),
        (b'["a", "list"]', "", "must hold a JSON object, not list"),
        (b"42", "", "must hold a JSON object, not int"),
        (b'{"theme": "\xff"}', ":1", "cannot be read"),
    ],
)
def test_a_corrupt_file_gives_empty_settings_and_a_message(
    tmp_path: Path, content: bytes, line: str, expected: str
) -> None:
    """The message names the file and, where there is one, the line at fault."""
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    settings, message = load_settings(path)
    assert settings == {}
    assert message is not None
    assert message.startswith(f"{path}{line}: ")
    assert expected in message
    assert "default settings" in message


def test_an_unreadable_path_gives_empty_settings_and_a_message(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()  # a folder where the file should be: unreadable even as root
    settings, message = load_settings(path)
    assert settings == {}
    assert message is not None and "cannot be read" in message


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_an_unreadable_file_gives_a_message(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    path = tmp_path / "settings.json"
    path.write_text("{}", encoding="utf-8")
    path.chmod(0)
    settings, message = load_settings(path)
    assert settings == {}
    assert message is not None and "cannot be read" in message


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_any_json_object_round_trips(settings: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        save_settings(path, settings)
        assert load_settings(path) == (settings, None)
        assert os.listdir(folder) == ["settings.json"]


# -- the typed settings ------------------------------------------------------------------------


def test_no_file_gives_the_defaults(tmp_path: Path) -> None:
    settings, problems = SettingsFile(tmp_path / "settings.json").read()
    assert problems == ()
    assert settings == Settings()
    assert (settings.theme, settings.notify, settings.tool_cards, settings.last_session) == (
        None,
        True,
        None,
        None,
    )
    assert settings.to_json() == {}


def test_usable_values_are_read_as_attributes() -> None:
    settings = Settings.from_json(
        {"theme": "cockpit-light", "notify": False, "tool_cards": "always", "last_session": "s1"}
    )
    assert settings == Settings("cockpit-light", False, "always", "s1")
    assert settings.kept == {}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("theme", 42),
        ("theme", None),
        ("notify", "no"),
        ("notify", 0),
        ("tool_cards", "sometimes"),
        ("tool_cards", ["always"]),
        ("last_session", 7),
    ],
)
def test_a_badly_typed_value_is_ignored_and_kept_as_it_was(name: str, value: Any) -> None:
    settings = Settings.from_json({name: value})
    assert getattr(settings, name) == getattr(Settings(), name)
    assert settings.to_json() == {name: value}


def test_unknown_keys_survive_a_change_and_a_save(tmp_path: Path) -> None:
    """A key another version of Cockpit wrote is written back untouched when the theme or
    the session to reopen on changes."""
    path = tmp_path / "settings.json"
    save_settings(path, {"theme": "cockpit-dark", "future": {"x": [1, 2]}, "notify": "no"})
    settings, _ = SettingsFile(path).read()
    save_settings(path, replace(settings, theme="cockpit-light", last_session="s2").to_json())
    assert load_settings(path) == (
        {"theme": "cockpit-light", "future": {"x": [1, 2]}, "notify": "no", "last_session": "s2"},
        None,
    )


def test_a_setting_set_to_its_default_is_not_written() -> None:
    assert Settings(notify=False).to_json() == {"notify": False}
    assert Settings.from_json({"notify": True}).to_json() == {}
    assert Settings(theme="x").to_json() == {"theme": "x"}


def test_a_broken_file_gives_the_defaults_and_its_problem(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("[1]", encoding="utf-8")
    settings, problems = SettingsFile(path).read()
    assert settings == Settings()
    assert len(problems) == 1 and "must hold a JSON object" in problems[0]


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_reading_and_writing_back_changes_nothing(data: dict[str, Any]) -> None:
    """Whatever the file holds, settings read from it and saved unchanged hold the same
    values: nothing is invented or altered, and only a usable value equal to its default
    may be left out (it reads the same)."""
    settings = Settings.from_json(data)
    written = settings.to_json()
    assert Settings.from_json(written) == settings
    assert all(key in data and data[key] == value for key, value in written.items())
    for key in data.keys() - written.keys():
        assert getattr(settings, key) == getattr(Settings(), key) == data[key]
