"""A picture of the new-session dialog completing its folder (issue 33, item 8) at 80x24:
`~/co` typed, the first folder that fits greyed after it, and the line under the field
listing the folders it may go on to, with how many more there are. HOME is a folder the
test fills, so every run lists the same folders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cockpit.ui.folder_field import FolderCandidates
from tests.snapshots.test_tui_snapshots import app_with, one_existing_session, settle
from tests.support.ui_helpers import burst, wait_until

Snap = Callable[..., bool]

FOLDERS = ("cobra", "cockpit", "cockroach", "code", "colours", "compose", "configs", "courses")


def test_the_folder_completion_at_80x24(
    snap_compare: Snap, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user-home"
    for name in (*FOLDERS, "docs", ".config"):
        (home / name).mkdir(parents=True)
    (home / "coffee.txt").write_text("a file")
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # the same agents missing everywhere
    app = app_with(tmp_path, one_existing_session)

    async def type_a_folder(pilot: Any) -> None:
        await settle(pilot)
        burst(app, "ctrl+n", "tab", *"~/co")
        await wait_until(
            lambda: (
                bool(app.screen.query(FolderCandidates))
                and app.screen.query_one(FolderCandidates).names == FOLDERS
            ),
            what="the folders listed",
        )
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=type_a_folder)
