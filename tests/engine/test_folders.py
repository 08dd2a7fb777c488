"""The folders a typed path may go on to, listed by the engine where the agents run (the
new-session dialog's completion), on a real tree: folders, files, a hidden folder, links,
a folder that cannot be read. It answers names only, bounded, and never fails: a folder it
cannot read has no folders to offer."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import cockpit.engine.core as core
from cockpit.engine.folders import list_folders
from cockpit.folder_completion import FOLDERS_LIMIT
from tests.support.engine_helpers import open_engine


@pytest.fixture
def tree() -> Iterator[Path]:
    """`place/` holding the folders `alpha`, `alps`, `beta`, `.hidden` and `locked` (no
    permissions at all), a file `alpine.txt`, a link `al-link` to `beta` and a broken
    link `al-gone`. In a folder anyone may walk through, so another user can list it."""
    place = Path(tempfile.mkdtemp(prefix="folders-")) / "place"
    place.parent.chmod(0o755)
    for name in ("alpha", "alps", "beta", ".hidden", "locked"):
        (place / name).mkdir(parents=True)
    (place / "locked" / "inside").mkdir()
    (place / "alpine.txt").write_text("a file")
    (place / "al-link").symlink_to(place / "beta")
    (place / "al-gone").symlink_to(place / "nowhere")
    (place / "locked").chmod(0)
    try:
        yield place
    finally:
        (place / "locked").chmod(0o755)
        shutil.rmtree(place.parent)


AS_ANOTHER_USER = """
import json, os, sys
from cockpit.engine.folders import list_folders
os.setgroups([])
os.setgid(int(sys.argv[3]))
os.setuid(int(sys.argv[2]))
print(json.dumps(list_folders(sys.argv[1])))
"""
"""`list_folders(argv[1])` run as the user (uid, gid) of argv[2:], root no longer."""


def listed_by_a_user(partial: str) -> list[str]:
    """`list_folders(partial)` as a user whom permissions bind: this process, unless it is
    root (which reads every folder), when it is `nobody` in a process of its own."""
    if os.getuid() != 0:
        return list_folders(partial)
    nobody = pwd.getpwnam("nobody")
    result = subprocess.run(
        [sys.executable, "-c", AS_ANOTHER_USER, partial, str(nobody.pw_uid), str(nobody.pw_gid)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    names: list[str] = json.loads(result.stdout)
    return names


def test_folders_and_links_to_folders_are_listed_sorted_files_never(tree: Path) -> None:
    assert list_folders(f"{tree}/al") == ["al-link", "alpha", "alps"]
    assert list_folders(f"{tree}/") == ["al-link", "alpha", "alps", "beta", "locked"]
    assert list_folders(f"{tree}/alpine") == []
    assert list_folders(f"{tree}/alpha") == ["alpha"]  # a folder typed whole is listed


def test_hidden_folders_only_when_a_dot_is_typed(tree: Path) -> None:
    assert ".hidden" not in list_folders(f"{tree}/")
    assert list_folders(f"{tree}/.") == [".hidden"]
    assert list_folders(f"{tree}/.h") == [".hidden"]


def test_the_home_is_expanded_where_the_engine_runs(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tree))
    assert list_folders("~/al") == ["al-link", "alpha", "alps"]
    assert list_folders("~/b") == ["beta"]


def test_what_cannot_be_listed_lists_nothing(tree: Path) -> None:
    """A folder that cannot be read, a file taken for a folder, a folder that is not there,
    a path relative to nothing the user chose: no folders, and no error."""
    assert "locked" in listed_by_a_user(f"{tree}/")
    assert listed_by_a_user(f"{tree}/locked/") == []
    assert listed_by_a_user(f"{tree}/locked/in") == []
    assert list_folders(f"{tree}/alpine.txt/") == []
    assert list_folders(f"{tree}/nowhere/") == []
    assert list_folders("alpha/") == []
    assert list_folders("") == []


def test_a_big_folder_is_listed_bounded(tmp_path: Path) -> None:
    for index in range(120):
        (tmp_path / f"d{index:03}").mkdir()
    (tmp_path / "e").mkdir()
    listed = list_folders(f"{tmp_path}/")
    assert len(listed) == FOLDERS_LIMIT
    assert listed[0] == "d000" and listed[-1] == "e"  # the last kept: they share nothing


async def test_the_engine_lists_off_its_event_loop(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big folder takes milliseconds to read: the engine reads it in a thread, so other
    clients' calls and the agents' streams go on meanwhile."""
    threads: list[int] = []

    def watched(partial: str) -> list[str]:
        threads.append(threading.get_ident())
        return list_folders(partial)

    monkeypatch.setattr(core, "list_folders", watched)
    async with open_engine(tmp_path / "home") as (engine, _):
        assert await engine.folders(f"{tree}/al") == ["al-link", "alpha", "alps"]
        assert await engine.folders(f"{tree}/nowhere/") == []
    assert threads and threading.get_ident() not in threads
