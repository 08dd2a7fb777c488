"""The tests' forked `cockpit` commands behave as `python -m cockpit` does: the same output
and exit status, their own environment, folder and input, and a timeout that kills them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from store.store import Store
from tests.support.forked_cockpit import run_command
from tests.support.helpers import new_session
from tests.support.proc_stat import parent_of
from tests.support.service_helpers import cockpit_command, kill_all, pid_alive, pids_of


def fresh(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cockpit_command(*args),
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [["--local", "ls"], ["--local", "show", "nothing"], ["--version"], ["run"], ["agents"]],
)
def test_a_forked_command_prints_and_exits_as_a_fresh_one(tmp_path: Path, args: list[str]) -> None:
    env = {**os.environ, "COCKPIT_HOME": str(tmp_path / "home")}
    forked = run_command(args, env=env, cwd=tmp_path, timeout=60)
    started = fresh(args, env, tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        started.returncode,
        started.stdout,
        started.stderr,
    )
    assert forked.stdout or forked.stderr


def test_a_forked_command_has_its_own_environment_folder_and_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It sees the environment and folder it is given, not this process's: the TUI's
    folder argument is read from its folder, and `ls` reads the store its COCKPIT_HOME
    names."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "not-this-one"))
    home = tmp_path / "home"
    folder = tmp_path / "folder"
    folder.mkdir()
    session = asyncio.run(a_session_in(home))
    env = {**os.environ, "COCKPIT_HOME": str(home), "COCKPIT_LOCAL": "1"}
    done = run_command(["nothing-here"], env=env, cwd=folder, timeout=60)
    assert done.returncode == 2 and f"{folder / 'nothing-here'} is not a folder" in done.stderr
    listed = run_command(["ls", "--json"], env=env, cwd=folder, timeout=60, stdin="ignored\n")
    assert listed.returncode == 0 and [s["id"] for s in json.loads(listed.stdout)] == [session]
    assert not (tmp_path / "not-this-one").exists()


async def a_session_in(home: Path) -> str:
    """A store in `home` holding one session: its id."""
    async with await Store.open(home / "cockpit.db") as store:
        return await new_session(store)


def test_a_command_that_outlasts_its_timeout_is_killed(tmp_path: Path) -> None:
    """Attached through a bridge command that never answers, a command waits for the
    service's hello; past the timeout it is killed and `TimeoutExpired` says so. (The
    bridge command, started with the command's environment, names its home; the command
    itself, a fork, shows the server's.)"""
    home = tmp_path / "home"
    env = {**os.environ, "COCKPIT_HOME": str(home)}
    started = time.monotonic()
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(
            run_command, ["--via", "sleep 60", "ls"], env=env, cwd=tmp_path, timeout=2.0
        )
        while not (bridges := pids_of(home)) and not running.done():
            time.sleep(0.01)
        assert len(bridges) == 1, f"the bridge command: {bridges}"
        command = parent_of(bridges[0])
        with pytest.raises(subprocess.TimeoutExpired):
            running.result()
    assert time.monotonic() - started < 20
    assert not pid_alive(command), "the command outlived its timeout"
    kill_all(bridges)  # left behind by the killed client, as a killed `cockpit` leaves it


def test_the_server_forking_the_commands_names_no_tests_store(tmp_path: Path) -> None:
    """It started before any test set its COCKPIT_HOME, so no test counts it among the
    processes left on its store."""
    run_command(["--version"], env=dict(os.environ), cwd=tmp_path, timeout=60)
    home = os.environ["COCKPIT_HOME"]
    assert pids_of(Path(home)) == []
