"""The interface's settings: one JSON object in `settings.json` in Cockpit's config folder
(`cockpit.paths.settings_path`), read as a typed `Settings`.

Two layers. The file layer (`load_settings`, `save_settings`) reads and writes any JSON
object: a missing file means defaults; a broken one also means defaults, but the problem is
handed back (file and line) so the caller can show it instead of silently losing settings.
Writes are atomic (a temporary file in the same folder, then `os.replace`) and private.
The typed layer (`Settings`, `SettingsFile`) is what the app uses: attributes with
defaults, tolerant of values it cannot use, read when they are used (a hand edit counts
without a restart), and saved one key at a time into the file as it is on disk then, so
that a hand edit or another Cockpit's change to another key survives. No Textual here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from cockpit.atomic_file import write_atomically
from cockpit.config_file import ConfigError, ConfigFile, Parsed
from cockpit.paths import private_dir

TOOL_CARD_POLICIES = ("failures", "always", "never")
"""The ways tool cards may open by default (`ToolCard.default_policy`)."""


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_flag(value: object) -> bool:
    return isinstance(value, bool)


def _is_choices(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(item, bool) for key, item in value.items()
    )


def _is_tool_card_policy(value: object) -> bool:
    return isinstance(value, str) and value in TOOL_CARD_POLICIES


@dataclass(frozen=True)
class Settings:
    """What the user chose, typed, each with its default. Reading is tolerant: a value of
    the wrong type (or a tool-card policy Cockpit does not know) is ignored and the
    default holds. Whatever the file holds besides usable values of these fields (a key
    another version of Cockpit wrote, a value that could not be used) is kept as it was
    and written back, so saving the theme never loses anything else in the file."""

    theme: str | None = None
    """The theme the user chose; None lets the terminal's colours decide."""
    notify: bool = True
    """Desktop notifications when a session needs the user and the terminal is not
    focused (the bell rings either way)."""
    tool_cards: str | None = None
    """How tool cards open by default (one of `TOOL_CARD_POLICIES`); None keeps Cockpit's."""
    last_session: str | None = None
    """The session Cockpit opens on next time."""
    worktrees: Mapping[str, bool] = field(default_factory=dict, hash=False)
    """For each repository (its top folder), whether the new-session dialog last asked for
    a worktree of its own: preselected next time."""
    kept: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """The rest of the file, as read."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Settings:
        """The settings in a JSON object: every usable value of a known field, and the
        rest kept."""
        usable: dict[str, Any] = {}
        kept: dict[str, Any] = {}
        for name, value in data.items():
            accepts = _ACCEPTS.get(name)
            if accepts is not None and accepts(value):
                usable[name] = value
            else:
                kept[name] = value
        return cls(**usable, kept=kept)

    def to_json(self) -> dict[str, Any]:
        """The JSON object to save: what was kept, with every field that is not at its
        default written over it (a file that held none stays without them)."""
        data = dict(self.kept)
        for known in fields(self):
            value = getattr(self, known.name)
            default = known.default
            if default is MISSING and known.default_factory is not MISSING:
                default = known.default_factory()
            if known.name != "kept" and value != default:
                data[known.name] = value
        return data


_ACCEPTS: Mapping[str, Callable[[object], bool]] = {
    "theme": _is_text,
    "notify": _is_flag,
    "tool_cards": _is_tool_card_policy,
    "last_session": _is_text,
    "worktrees": _is_choices,
}
"""For each field of `Settings` read from the file, the values it takes."""


class SettingsFile:
    """`settings.json`, read when a setting is used and written one setting at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = settings_file(path)

    def read(self) -> tuple[Settings, tuple[str, ...]]:
        """The settings as the file says now (read again when it changed; the ones read
        before while it is broken), and the problems of a version first seen now."""
        data, new = self._file.read()
        return Settings.from_json(data), new

    def save(self, name: str, value: object) -> None:
        """Set one setting (None removes it) in the file as it is on disk now, leaving
        every other key as it is there. A file that cannot be read as settings is never
        overwritten: ConfigError, saying why (`read` has reported it already). OSError
        when the write fails."""
        data, _ = self._file.read()
        if self._file.version.broken:
            raise ConfigError(self._file.problems[0])
        if data.get(name) == value:
            return
        changed = {key: item for key, item in data.items() if key != name}
        if value is not None:
            changed[name] = value
        save_settings(self.path, changed)


def parse_settings(text: str, origin: str, _last: object = None) -> Parsed[dict[str, Any]]:
    """The JSON object of a settings file; ConfigError, naming the file and line, when
    the text is not one."""
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{origin}:{error.lineno}: not valid JSON: {error.msg}") from None
    if not isinstance(settings, dict):
        kind = type(settings).__name__
        raise ConfigError(f"{origin}: must hold a JSON object, not {kind}")
    return Parsed(settings)


def settings_file(path: Path) -> ConfigFile[dict[str, Any]]:
    """The settings file at `path`, read when it is used."""
    return ConfigFile(
        path,
        parse_settings,
        {},
        kept="the settings read before stay in force",
        defaults="using default settings",
    )


def load_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """The settings in `path`, and a message when the file exists but cannot be used.
    Never raises: a missing, unreadable or invalid file gives `{}`."""
    settings, problems = settings_file(path).read()
    return settings, problems[0] if problems else None


def save_settings(path: Path, settings: Mapping[str, Any]) -> None:
    """Replace the settings file with `settings` as JSON, atomically: a reader sees the old
    file or the new one, never half of one. The folder is created owner-only if missing
    and the file is owner-only (mode 0600). Raises TypeError for values JSON cannot hold,
    before touching the disk."""
    text = json.dumps(dict(settings), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    private_dir(path.parent)
    write_atomically(path, text.encode("utf-8"), 0o600)
