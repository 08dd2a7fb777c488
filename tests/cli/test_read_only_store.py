"""A store the user made read-only: every command says so in one line that keeps the
system's words and the file, with no traceback, and exits 5. Through the service a run said
"[Errno None] None: '.../locks/...'", with --local it printed an EROFS traceback, and so did
`cockpit service stop`.

The store is made read-only as a user would: a read-only mount over its folder (mode bits
do not stop root, which the suite may run as). The mount lives in a mount namespace of the
test's own (`unshare`), so nothing outside it sees it and nothing is left mounted whatever
happens; every command runs inside it as a fresh `python -m cockpit`, and the service one
of them starts runs there too (`real_spawn`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cockpit.cli.exits import EXIT_OK, EXIT_STORE
from tests.support.service_helpers import cockpit_env, services_stopped

pytestmark = [
    pytest.mark.real_spawn,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mount namespaces are Linux's"),
]

COMMAND_TIMEOUT = 60
"""Seconds one command may take inside the namespace (a fresh interpreter, a busy machine)."""

STEPS = {
    "run-service": "run --agent demo hi",
    "ls-service": "ls",
    "run-local": "--local run --agent demo hi",
    "ls-local": "--local ls",
    "stop": "service stop --yes",
    "run-no-service": "run --agent demo hi",
    "tui": "",
}
"""What the user tries once the store is read-only (a service started before runs), in
order: each step's output goes to files named after it."""

SCRIPT = """
set -u
cockpit() {{ timeout {timeout} "$PYTHON" -m cockpit "$@" </dev/null; }}
cockpit run --agent demo hello >/dev/null 2>&1 || exit 90
mount --bind "$COCKPIT_HOME" "$COCKPIT_HOME" || exit 91
mount -o remount,bind,ro "$COCKPIT_HOME" || exit 92
touch "$COCKPIT_HOME/probe" 2>/dev/null && exit 93
{steps}
"""


def unshare_command() -> list[str] | None:
    """How this process may make a mount namespace of its own (as root, or mapped to root
    in a user namespace); None when it cannot."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return None
    for command in (["unshare", "--mount"], ["unshare", "--mount", "--map-root-user"]):
        probe = subprocess.run([*command, "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return command
    return None


@pytest.fixture
def outcome(tmp_path: Path, isolated_home: Path) -> Iterator[dict[str, tuple[int, str, str]]]:
    """Each step's exit code, stdout and stderr."""
    unshare = unshare_command()
    if unshare is None:
        pytest.skip("no mount namespace here (unshare and mount, as root or in a user namespace)")
    out = tmp_path / "out"
    out.mkdir()
    steps = "\n".join(
        f'cockpit {words} >"{out}/{name}.out" 2>"{out}/{name}.err"; echo $? >"{out}/{name}.code"'
        for name, words in STEPS.items()
    )
    env = {**cockpit_env(isolated_home), "PYTHON": sys.executable}
    isolated_home.mkdir(parents=True, exist_ok=True)
    with services_stopped(isolated_home):
        done = subprocess.run(
            [*unshare, "sh", "-c", SCRIPT.format(timeout=COMMAND_TIMEOUT, steps=steps)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT * (len(STEPS) + 2),
            check=False,
        )
        assert done.returncode == 0, (done.returncode, done.stderr)
        yield {
            name: (
                int((out / f"{name}.code").read_text()),
                (out / f"{name}.out").read_text(),
                (out / f"{name}.err").read_text(),
            )
            for name in STEPS
        }


def one_line(err: str) -> str:
    """stderr holds one line, and no traceback."""
    assert "Traceback" not in err and "[Errno" not in err, err
    assert err.count("\n") == 1, err
    return err.strip()


def test_every_command_says_why_in_one_line(
    outcome: dict[str, tuple[int, str, str]], isolated_home: Path
) -> None:
    home = re.escape(os.fspath(isolated_home))

    code, _out, err = outcome["run-service"]
    assert code == EXIT_STORE
    lock = rf"cockpit: cannot write {home}/locks/cockpit-\w+\.lock: Read-only file system"
    assert re.fullmatch(lock, one_line(err))

    code, out, err = outcome["ls-service"]  # the service reads its store as before
    assert (code, err) == (EXIT_OK, "")
    assert "hello" in out

    code, _out, err = outcome["run-local"]
    database = f"cockpit: cannot write {isolated_home}/cockpit.db: Read-only file system"
    assert (code, one_line(err)) == (EXIT_STORE, database)

    code, out, err = outcome["ls-local"]  # reading needs no write
    assert (code, err) == (EXIT_OK, "")
    assert "hello" in out

    code, _out, err = outcome["stop"]
    assert code == EXIT_OK, err
    assert "Traceback" not in err and "Stopped the Cockpit service" in err

    log = f"cockpit: cannot write {isolated_home}/logs/service.log: Read-only file system"
    for step in ("run-no-service", "tui"):  # no service runs now, and none can start
        code, _out, err = outcome[step]
        assert (code, one_line(err)) == (EXIT_STORE, log), step
