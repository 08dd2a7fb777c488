"""Errors keep their meaning across the wire: an OSError comes back with its type, errno,
meaning and files (a read-only store said "[Errno None] None: '.../locks/...'" through the
service), a sqlite3 error with its message and SQLite's code, and a path crosses as text."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cockpit import api
from cockpit.protocol import RemoteError, decode, encode, error_data, raised

numbers = st.sampled_from(sorted(errno.errorcode)) | st.integers(-5, 10_000)
texts = st.text(max_size=30)
files = st.none() | texts | st.integers(0, 1000)


def across(error: BaseException) -> BaseException:
    """`error` as a client raises it: its data through JSON, as the wire carries it."""
    return raised(json.loads(json.dumps(error_data(error))))


def same_os_error(sent: OSError, got: BaseException) -> None:
    assert type(got) is type(sent)
    assert isinstance(got, OSError)
    assert str(got) == str(sent)
    assert (got.errno, got.strerror) == (sent.errno, sent.strerror)
    assert (got.filename, got.filename2) == (sent.filename, sent.filename2)


@given(numbers, texts, files, files)
def test_an_os_error_comes_back_the_same(
    number: int, meaning: str, first: str | int | None, second: str | int | None
) -> None:
    args: tuple[Any, ...] = (number, meaning)
    if second is not None:
        args = (number, meaning, first, None, second)
    elif first is not None:
        args = (number, meaning, first)
    same_os_error(error := OSError(*args), across(error))


@given(texts)
def test_an_os_error_made_of_a_message_comes_back_as_that_message(message: str) -> None:
    """Cockpit's own "X is not a folder" has no errno: it came back as "[Errno None] None:
    None", the filename set to None by hand."""
    for cls in (OSError, NotADirectoryError, FileNotFoundError, PermissionError):
        got = across(cls(message))
        assert type(got) is cls
        assert str(got) == message
        assert "[Errno None]" not in str(got) or "[Errno None]" in message


@pytest.mark.parametrize("number", [errno.EROFS, errno.EACCES, errno.ENOSPC, errno.EDQUOT])
def test_a_store_that_cannot_be_written_keeps_its_errno(number: int) -> None:
    lock = "/home/u/.local/share/cockpit/locks/cockpit-1.lock"
    sent = OSError(number, os.strerror(number), lock)
    got = across(sent)
    same_os_error(sent, got)
    assert isinstance(got, OSError)
    assert str(got).endswith(f"{got.strerror}: '{lock}'")


class LockFailed(OSError):
    """A subclass the client does not know."""


@given(st.sampled_from([errno.EROFS, errno.EACCES, errno.ENOENT, errno.EEXIST, 9999]), texts)
def test_an_unknown_subclass_comes_back_as_an_os_error_with_its_errno(
    number: int, meaning: str
) -> None:
    sent = LockFailed(number, meaning, "f")
    got = across(sent)
    assert isinstance(got, OSError)
    assert (got.errno, str(got), got.filename) == (number, str(sent), "f")
    assert type(got) is type(OSError(number, meaning))  # what the errno stands for


def test_an_os_error_with_a_path_or_bytes_for_a_file_names_it_as_text() -> None:
    got = across(OSError(errno.EROFS, "Read-only file system", Path("/s/x"), None, b"/s/y"))
    assert isinstance(got, OSError)
    assert (got.filename, got.filename2) == ("/s/x", "/s/y")


@given(texts)
def test_a_sqlite_error_keeps_its_type_and_message(message: str) -> None:
    for cls in (
        sqlite3.Error,
        sqlite3.OperationalError,
        sqlite3.DatabaseError,
        sqlite3.IntegrityError,
        sqlite3.ProgrammingError,
        sqlite3.DataError,
    ):
        got = across(cls(message))
        assert type(got) is cls
        assert str(got) == message


def test_a_sqlite_error_keeps_sqlites_own_code(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.Error) as caught:
        sqlite3.connect(tmp_path / "no-such-folder" / "cockpit.db")
    got = across(caught.value)
    assert type(got) is sqlite3.OperationalError
    assert str(got) == str(caught.value)
    assert got.sqlite_errorname == "SQLITE_CANTOPEN" == caught.value.sqlite_errorname
    assert got.sqlite_errorcode == caught.value.sqlite_errorcode


def test_an_error_of_another_module_named_like_sqlites_is_not_taken_for_one() -> None:
    class OperationalError(Exception):
        pass

    got = across(OperationalError("boom"))
    assert isinstance(got, RemoteError)
    assert str(got) == "OperationalError: boom"


def test_a_path_crosses_as_its_text() -> None:
    """`export` answers with the file it wrote: "PosixPath cannot cross the wire"."""
    assert encode(Path("/tmp/x.md")) == "/tmp/x.md"
    assert decode(encode({"where": [Path("/a"), Path("b")]})) == {"where": ["/a", "b"]}


def test_a_write_the_store_refused_comes_back_as_the_contracts_not_saved() -> None:
    """A client tells a refused write by the contract's type, never the database's."""
    got = across(api.NotSaved("database or disk is full"))
    assert type(got) is api.NotSaved and str(got) == "database or disk is full"
