"""Folders whose paths show in the snapshot pictures, so they are the same in every run:
under `cockpit-snapshots` in the temporary folder. That folder is shared by every user of
the machine, so it is used only when it is a folder of this user's (made private when it
is made), never when it is another user's or a link."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

TOP = "cockpit-snapshots"


def snapshot_top() -> Path:
    """`cockpit-snapshots` in the temporary folder, made private if missing; the test
    fails, saying why, when it is not a folder of this user's."""
    top = Path(tempfile.gettempdir()) / TOP
    with contextlib.suppress(FileExistsError):
        top.mkdir(mode=0o700)
    found = top.lstat()
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
        pytest.fail(f"{top} is not a folder of yours (another user's, or a link): not used")
    if found.st_mode & 0o022:  # ours, but others could put links in it
        top.chmod(0o700)
    return top


def snapshot_folder(name: str, *, fresh: bool = True, made: bool = True) -> Path:
    """The folder `name` under `snapshot_top()`: emptied first when `fresh`, and made
    when `made`."""
    folder = snapshot_top() / name
    if fresh:
        shutil.rmtree(folder, ignore_errors=True)
    if made:
        folder.mkdir(exist_ok=True)
    return folder
