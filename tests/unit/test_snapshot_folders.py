"""The snapshot pictures' fixed folder, in the temporary folder every user shares: used
only when it is a folder of this user's, never through a link another user could plant."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.support.snapshot_folders import TOP, snapshot_folder


def test_a_link_in_its_place_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    (tmp_path / TOP).symlink_to(elsewhere)
    with pytest.raises(pytest.fail.Exception, match="not a folder of yours"):
        snapshot_folder("picture")
    assert list(elsewhere.iterdir()) == []


def test_it_is_made_private_and_kept_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    folder = snapshot_folder("picture")
    assert folder.is_dir() and (tmp_path / TOP).stat().st_mode & 0o777 == 0o700
    (tmp_path / TOP).chmod(0o777)
    (folder / "old").write_text("from the last run")
    assert list(snapshot_folder("picture").iterdir()) == []
    assert (tmp_path / TOP).stat().st_mode & 0o777 == 0o700
