"""Replacing a file whole (`cockpit.atomic_file`), as the settings, an agent's fs/* writes
and the demo agent's histories do: the data reaches the disk before the rename, the mode
is the one asked for, nothing planted beside or at the target is written through, and a
failure keeps the old file and leaves nothing behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.agentkit.demo import history
from cockpit.atomic_file import write_atomically
from cockpit.engine.files import write_text
from cockpit.ui.settings import save_settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_round_trip_with_the_mode_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "f"
    write_atomically(path, b"one")
    assert path.read_bytes() == b"one"
    assert mode(path) == 0o600
    write_atomically(path, b"two", 0o640)
    assert path.read_bytes() == b"two"
    assert mode(path) == 0o640
    assert os.listdir(tmp_path) == ["f"]


def test_the_mode_is_not_narrowed_or_widened_by_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomically(tmp_path / "f", b"x", 0o644)
    finally:
        os.umask(old)
    assert mode(tmp_path / "f") == 0o644


def test_the_data_reaches_the_disk_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old")
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        assert os.fstat(descriptor).st_size == len(b"new data")
        assert stat.S_IMODE(os.fstat(descriptor).st_mode) == 0o600
        events.append("fsync")
        real_fsync(descriptor)

    def replace(source: str | Path, target: str | Path) -> None:
        assert path.read_bytes() == b"old"
        assert Path(source).parent == tmp_path
        events.append("replace")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_atomically(path, b"new data")
    assert events == ["fsync", "replace"]
    assert path.read_bytes() == b"new data"


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"theirs")
    folder = tmp_path / "folder"
    folder.mkdir()
    os.symlink(elsewhere, folder / "f")
    write_atomically(folder / "f", b"mine")
    assert not (folder / "f").is_symlink()
    assert (folder / "f").read_bytes() == b"mine"
    assert elsewhere.read_bytes() == b"theirs"


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failure_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old")

    def fail(*_: object) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(OSError, match="disk on fire"):
        write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["f"]


def test_every_writer_flushes_to_disk_before_it_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings did; an agent's fs/* write and the demo agent's history did not (a
    crash could leave an empty file under the new name)."""
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(descriptor: int) -> None:
        synced.append(os.fstat(descriptor).st_size)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setenv("COCKPIT_DATA_DIR", str(tmp_path / "data"))
    root = tmp_path / "root"
    root.mkdir()
    save_settings(tmp_path / "config" / "settings.json", {"theme": "x"})
    write_text(root, "a.txt", "hello")
    history.save_session(history.Session("s1", str(root)))
    assert len(synced) == 3
    assert all(size > 0 for size in synced)


def test_the_demo_history_never_writes_through_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history went through a fixed temporary name (`ID.tmp`), opened without
    O_EXCL: a link planted there was written through."""
    monkeypatch.setenv("COCKPIT_DATA_DIR", str(tmp_path / "data"))
    target = tmp_path / "target"
    target.write_text("keep")
    folder = history.data_root()
    os.symlink(target, folder / "s1.tmp")
    history.save_session(history.Session("s1", str(tmp_path)))
    assert target.read_text() == "keep"
    assert history.read_saved("s1") is not None
    assert mode(folder / "s1.json") == 0o600


def test_a_new_agent_file_takes_the_umask_and_an_old_one_keeps_its_mode(
    tmp_path: Path, umask_022: None
) -> None:
    write_text(tmp_path, "new.txt", "x")
    assert mode(tmp_path / "new.txt") == 0o644
    (tmp_path / "old.txt").write_text("x")
    (tmp_path / "old.txt").chmod(0o751)
    write_text(tmp_path, "old.txt", "y")
    assert mode(tmp_path / "old.txt") == 0o751
