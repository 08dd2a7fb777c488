"""What a command makes of the word a service that could not start sent it
(`cockpit.remote.launch.start_failure`): a file no one may write (a full disk, a read-only
folder) as the same error the command meets with --local (exit 5, naming the file), any
other reason as ServiceUnavailable (exit 6), never "[Errno N]". A full disk used to reach the user as "did not start: [Errno 28] No
space left on device" (exit 6)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from cockpit.api import NotSaved, SchemaError
from cockpit.cli.exits import system_error_message
from cockpit.paths import ForeignFolder
from cockpit.protocol import error_data
from cockpit.remote.launch import ForeignService, ServiceUnavailable, start_failure

DATA = Path("/home/u/.local/share/cockpit")


def said(error: BaseException) -> dict[str, Any]:
    """The word a service sends for `error`, as the client reads it off the pipe."""
    loaded: dict[str, Any] = json.loads(json.dumps(error_data(error)))
    return loaded


def full(path: str) -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            full(f"{DATA}/service.lock"),
            f"cannot write {DATA}/service.lock: No space left on device",
        ),
        (
            PermissionError(errno.EROFS, os.strerror(errno.EROFS), f"{DATA}/locks/x.lock"),
            f"cannot write {DATA}/locks/x.lock: Read-only file system",
        ),
        (
            OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), f"{DATA}/cockpit.db-wal"),
            f"cannot write {DATA}/cockpit.db-wal: {os.strerror(errno.EDQUOT)}",
        ),
    ],
)
def test_a_file_no_one_may_write_is_said_as_with_local(error: OSError, line: str) -> None:
    failure = start_failure(DATA, said(error))
    assert isinstance(failure, OSError) and not isinstance(failure, ConnectionError)
    assert (failure.errno, failure.filename) == (error.errno, error.filename)
    assert system_error_message(failure) == line


def test_a_database_that_refused_a_write_is_not_saved() -> None:
    message = f"cannot write {DATA}/cockpit.db: database or disk is full"
    failure = start_failure(DATA, said(NotSaved(message)))
    assert isinstance(failure, NotSaved) and str(failure) == message


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (OSError(errno.EADDRINUSE, os.strerror(errno.EADDRINUSE)), "Address already in use"),
        (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "No space left on device"),
        (
            IsADirectoryError(errno.EISDIR, "Is a directory", "/run/x.sock"),
            "/run/x.sock: Is a directory",
        ),
        (
            PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/run/c"),
            "/run/c: Permission denied",
        ),
        (RuntimeError("the loop broke"), "the loop broke"),
    ],
)
def test_anything_else_is_the_service_not_starting_in_words(error: Exception, why: str) -> None:
    failure = start_failure(DATA, said(error))
    assert isinstance(failure, ServiceUnavailable)
    assert str(failure) == (
        f"the Cockpit service for {DATA} did not start: {why} (see {DATA}/logs/service.log)"
    )


def test_a_newer_store_and_a_foreign_folder_keep_their_own_errors() -> None:
    newer = start_failure(DATA, said(SchemaError("written by a newer Cockpit")))
    assert isinstance(newer, SchemaError) and str(newer) == "written by a newer Cockpit"
    foreign = start_failure(DATA, said(ForeignFolder(errno.EPERM, "not yours", "/tmp/c")))
    assert isinstance(foreign, ForeignService)
