"""Where worktrees go and what their branches are called: `worktree_folder` and
`branch_prefix` in `settings.json`, read when a worktree is made (the file is the
interface's too, which reports what is wrong with it: here a broken file only means the
last good values, or the defaults, hold)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.config_file import ConfigError, ConfigFile, Parsed
from cockpit.engine.worktrees.naming import DEFAULT_PREFIX, prefix_problem
from cockpit.paths import SETTINGS_NAME

WORKTREES_NAME = "worktrees"
"""The folder in Cockpit's data folder that holds worktrees unless configured."""


@dataclass(frozen=True)
class WorktreeSettings:
    """Where new worktrees go and how their branches begin."""

    folder: Path
    prefix: str = DEFAULT_PREFIX


def default_settings(data: Path) -> WorktreeSettings:
    """Worktrees in `worktrees/` of the data folder `data`, branches `cockpit/...`."""
    return WorktreeSettings(data / WORKTREES_NAME)


def read_settings(data: Path, values: dict[str, Any]) -> WorktreeSettings:
    """The worktree settings a settings object holds (a value that is not text is left
    out; a folder may start with `~`, and one that is relative is taken from the data folder).
    ValueError for a branch prefix git would refuse."""
    folder, prefix = values.get("worktree_folder"), values.get("branch_prefix")
    settings = default_settings(data)
    if isinstance(folder, str) and folder.strip():
        chosen = Path(folder).expanduser()
        settings = WorktreeSettings(chosen if chosen.is_absolute() else data / chosen)
    if isinstance(prefix, str):
        problem = prefix_problem(prefix)
        if problem:
            raise ValueError(f"{problem} (`branch_prefix` in {SETTINGS_NAME})")
        settings = WorktreeSettings(settings.folder, prefix)
    return settings


def settings_file(config: Path) -> ConfigFile[dict[str, Any]]:
    """`settings.json` in `config`, as a JSON object, read when it is used."""
    return ConfigFile(config / SETTINGS_NAME, _parse, {})


def _parse(text: str, origin: str, _last: object) -> Parsed[dict[str, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{origin}:{error.lineno}: not valid JSON: {error.msg}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{origin}: must hold a JSON object")
    return Parsed(value)
