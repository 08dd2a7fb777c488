"""The folders a typed path may go on to, listed where the agents run: a session's folder
is on the engine's side, which over `--remote` is another machine than the screen's. The
rule of what is listed is `cockpit.folder_completion.matching`; this module reads the
folder."""

from __future__ import annotations

import os

from cockpit.folder_completion import FOLDERS_LIMIT, matching, split_partial


def list_folders(partial: str, limit: int = FOLDERS_LIMIT) -> list[str]:
    """The names of the folders in the folder `partial` ends in (up to its last `/`, `~`
    expanded here) that start with the rest of it. A link to a folder is a folder (the
    user can open it). A partial that is not absolute, or a folder that cannot be read,
    lists none: completion has nothing to say about it, and nothing to complain about."""
    head, stem = split_partial(partial)
    folder = os.path.expanduser(head)
    if not os.path.isabs(folder):
        return []
    try:
        with os.scandir(folder) as entries:
            folders = [
                entry.name for entry in entries if entry.name.startswith(stem) and is_folder(entry)
            ]
    except OSError:
        return []
    return matching(folders, stem, limit)


def is_folder(entry: os.DirEntry[str]) -> bool:
    """True for a folder or a link to one (False for one that vanished meanwhile)."""
    try:
        return entry.is_dir()
    except OSError:
        return False
