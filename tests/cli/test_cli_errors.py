"""What the command line says when the system refuses it a file, or a folder is not one:
one line a user can act on, the documented exit code, no traceback. `cockpit run --cwd
/does/not/exist` said `cockpit: [Errno None] None: None` through the service; a relative
`--cwd` was looked for in the service's own folder."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from cockpit.cli.exits import EXIT_OK, EXIT_USAGE, system_error_message
from tests.support.cli_modes import MODES, run_in


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            OSError(errno.EROFS, os.strerror(errno.EROFS), "/s/locks/a.lock"),
            "cannot write /s/locks/a.lock: Read-only file system",
        ),
        (
            OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/s/cockpit.db"),
            "cannot write /s/cockpit.db: No space left on device",
        ),
        (
            PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/s/cockpit.db"),
            "cannot use /s/cockpit.db: Permission denied",
        ),
        (
            OSError(errno.EXDEV, os.strerror(errno.EXDEV), "/a", None, "/b"),
            f"cannot use /a -> /b: {os.strerror(errno.EXDEV)}",
        ),
        (OSError(errno.EIO, os.strerror(errno.EIO)), os.strerror(errno.EIO)),
        (NotADirectoryError("/x is not a folder"), "/x is not a folder"),
    ],
)
def test_a_system_error_is_one_line_with_the_file_and_the_reason(error: OSError, line: str) -> None:
    assert system_error_message(error) == line


@pytest.mark.parametrize("mode", MODES)
def test_a_folder_that_is_not_there_is_one_line_and_exit_two(mode: str, cli_home: Path) -> None:
    result = run_in(mode, cli_home, "run", "--agent", "demo", "--cwd", "/does/not/exist", "hi")
    assert (result.returncode, result.stderr) == (
        EXIT_USAGE,
        "cockpit: /does/not/exist is not a folder\n",
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_relative_folder_is_the_users(mode: str, cli_home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    result = run_in(mode, cli_home, "run", "--agent", "demo", "--cwd", "sub", "hi", cwd=work)
    assert result.returncode == EXIT_OK, result.stderr
    (listed,) = json.loads(run_in(mode, cli_home, "ls", "--json").stdout)
    assert listed["cwd"] == str(work / "sub")
