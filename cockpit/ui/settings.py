"""A tiny settings store: one JSON object in `settings.json` in Cockpit's config folder.

Used by the interface (the chosen theme, say) and by engine-side code alike, so it imports
no Textual. A missing file means defaults; a broken one also means defaults, but the
problem is handed back so the caller can show it instead of silently losing settings.
Writes are atomic (a temporary file in the same folder, then `os.replace`) and private.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cockpit.paths import config_dir, private_dir

SETTINGS_NAME = "settings.json"


def settings_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the settings live: `settings.json` in Cockpit's config folder."""
    return config_dir(environ) / SETTINGS_NAME


def load_settings(path: Path) -> tuple[dict[str, Any], str | None]:
    """The settings in `path`, and a message when the file exists but cannot be used.
    Never raises: a missing, unreadable or invalid file gives `{}`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as error:
        return {}, f"{path}: cannot be read, using default settings: {error}"
    try:
        settings = json.loads(text)
    except ValueError as error:
        return {}, f"{path}: not valid JSON, using default settings: {error}"
    if not isinstance(settings, dict):
        kind = type(settings).__name__
        return {}, f"{path}: must hold a JSON object, not {kind}; using default settings"
    return settings, None


def _write_private(folder: Path, text: str) -> Path:
    """Write `text` to a new owner-only temporary file in `folder` (same file system as
    the target, so the rename is atomic); return its path."""
    fd, name = tempfile.mkstemp(prefix=f".{SETTINGS_NAME}.", suffix=".tmp", dir=folder)
    temp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        temp.chmod(0o600)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return temp


def save_settings(path: Path, settings: Mapping[str, Any]) -> None:
    """Replace the settings file with `settings` as JSON, atomically: a reader sees the old
    file or the new one, never half of one. The folder is created owner-only if missing
    and the file is owner-only (mode 0600). Raises TypeError for values JSON cannot hold,
    before touching the disk."""
    text = json.dumps(dict(settings), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    folder = private_dir(path.parent)
    temp = _write_private(folder, text)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
