"""Confinement of agent file access to the session's root, and line selection."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.files import OutsideRoot, confine, read_text, select_lines, write_text


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "a.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path, folder / "escape")
    os.symlink(folder / "a.txt", folder / "inside-link")
    return folder


def test_paths_inside_are_allowed(root: Path) -> None:
    assert confine(root, str(root / "a.txt")) == root / "a.txt"
    assert confine(root, "a.txt") == root / "a.txt"
    assert confine(root, str(root / "new" / "file.py")) == root / "new" / "file.py"
    assert confine(root, str(root / "inside-link")) == root / "a.txt"


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "{root}/../secret.txt", "/etc/passwd", "{root}/escape/secret.txt", "escape"],
)
def test_escapes_are_refused(root: Path, path: str) -> None:
    with pytest.raises(OutsideRoot, match="outside the session's folder"):
        confine(root, path.format(root=root))


def test_read_with_line_and_limit(root: Path) -> None:
    assert read_text(root, str(root / "a.txt")) == "one\ntwo\nthree\n"
    assert read_text(root, str(root / "a.txt"), line=2, limit=1) == "two\n"
    assert read_text(root, str(root / "a.txt"), line=3) == "three\n"


def test_read_replaces_invalid_utf8(root: Path) -> None:
    (root / "bin.txt").write_bytes(b"ok \xff\xfe end")
    assert read_text(root, "bin.txt") == "ok \ufffd\ufffd end"


def test_missing_file_is_not_found(root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_text(root, "missing.txt")


def test_write_creates_folders_and_keeps_mode(root: Path) -> None:
    write_text(root, str(root / "deep" / "er" / "new.md"), "hello\n")
    assert (root / "deep" / "er" / "new.md").read_text() == "hello\n"
    (root / "a.txt").chmod(0o640)
    write_text(root, "a.txt", "changed")
    assert (root / "a.txt").read_text() == "changed"
    assert (root / "a.txt").stat().st_mode & 0o777 == 0o640
    with pytest.raises(OutsideRoot):
        write_text(root, str(root / "escape" / "planted.txt"), "x")
    assert not (root.parent / "planted.txt").exists()


@given(
    st.lists(st.text(alphabet="ab\n", max_size=5), max_size=8),
    st.integers(1, 10),
    st.integers(0, 10),
)
def test_select_lines_matches_slicing(parts: list[str], line: int, limit: int) -> None:
    text = "".join(parts)
    lines = text.splitlines(keepends=True)
    assert select_lines(text, line, limit) == "".join(lines[line - 1 : line - 1 + limit])
    assert select_lines(text, None, None) == text
