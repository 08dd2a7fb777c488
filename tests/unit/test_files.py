"""Confinement of agent file access to the session's root, and line selection."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit.engine.files import (
    FileTooLarge,
    OutsideRoot,
    Refused,
    confine,
    read_text,
    select_lines,
    write_text,
)


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


def test_a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer(root: Path) -> None:
    """Reading a FIFO waited forever for a writer, and `cockpit run` with it."""
    os.mkfifo(root / "pipe")
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_text(root, "pipe")
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # release the blocked open before failing
        os.close(os.open(root / "pipe", os.O_WRONLY | os.O_NONBLOCK))
        reader.join(5)
        pytest.fail("the read of a FIFO waited for a writer")
    assert isinstance(outcome[0], Refused) and "not a regular file" in str(outcome[0])
    with pytest.raises(Refused, match="not a regular file"):
        write_text(root, "pipe", "x")


def test_a_huge_sparse_file_is_refused_by_its_size(root: Path) -> None:
    with open(root / "sparse", "wb") as handle:
        handle.truncate(2 * 1024**3)
    with pytest.raises(FileTooLarge, match="2,147,483,648 bytes"):
        read_text(root, "sparse")


@pytest.mark.parametrize(
    ("path", "why"),
    [("", "empty path"), ("a\x00b", "NUL character"), ("x" * 5000, "5,000 characters")],
)
def test_paths_that_name_no_file_are_refused(root: Path, path: str, why: str) -> None:
    with pytest.raises(Refused, match=why):
        read_text(root, path)
    with pytest.raises(Refused, match=why):
        write_text(root, path, "x")


@pytest.mark.parametrize("path", ["", ".", "{root}", "sub/.."])
def test_a_write_to_the_root_itself_touches_nothing_outside_it(root: Path, path: str) -> None:
    """Writing to `.` made its temporary file in the root's parent."""
    (root / "sub").mkdir()
    before = sorted(os.listdir(root.parent))
    with pytest.raises(Refused):
        write_text(root, path.format(root=root), "x")
    assert sorted(os.listdir(root.parent)) == before
    with pytest.raises(IsADirectoryError):
        write_text(root, "sub", "x")
