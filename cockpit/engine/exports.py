"""Where a transcript export goes, and writing it without ever replacing a file unasked.

An export lands in Cockpit's own `exports/` folder unless the user names a path: the
session's folder is the user's project, and a title such as "notes" must never turn into
their `notes.md`.
"""

from __future__ import annotations

import os
from pathlib import Path

from cockpit.paths import private_dir

EXPORTS = "exports"
"""The folder, inside Cockpit's data folder, that exports go to by default."""

FILE_NAME_BYTES = 120
"""The most bytes `safe_file_name` makes (file systems allow 255, and an ending follows)."""


def safe_file_name(title: str) -> str:
    """A file name made from a title: letters, digits, dashes, short enough for any file
    system (titles can be long, and agents set them)."""
    name = "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")
    while "--" in name:
        name = name.replace("--", "-")
    while len(name.encode()) > FILE_NAME_BYTES:
        name = name[:-1]
    return name.strip("-") or "session"


def export_path(folder: str, target: str) -> Path:
    """Where an export the user named goes: `target` as given when absolute, else inside
    `folder` (the session's)."""
    path = Path(target).expanduser()
    return path if path.is_absolute() else Path(folder) / path


def export_target(data_dir: Path, folder: str, title: str, session: str, given: str) -> Path:
    """Where an export goes: the path the user gave (relative to the session's `folder`),
    else `exports/TITLE-SESSION.md` in Cockpit's data folder (the session's id keeps two
    sessions with one title apart)."""
    if given:
        return export_path(folder, given)
    return data_dir / EXPORTS / f"{safe_file_name(title)}-{session}.md"


def write_export(path: Path, text: str, *, replace: bool, data_dir: Path) -> None:
    """Write an export. Without `replace`, an existing file is never touched
    (FileExistsError); Cockpit's own exports folder is created owner-only."""
    if path.parent == data_dir / EXPORTS:
        private_dir(path.parent)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if replace else os.O_EXCL)
    descriptor = os.open(path, flags, 0o600)
    with open(descriptor, "w", encoding="utf-8") as out:
        out.write(text)
