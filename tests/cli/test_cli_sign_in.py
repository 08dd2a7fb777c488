"""`cockpit run` with an agent that asks to be signed in, through the service and with
`--local`: off a terminal it exits 3 naming the agent's ways; on one the user picks a way
and types the key unseen, the turn runs, and the key is found in no file of the store."""

from __future__ import annotations

import fcntl
import os
import select
import shlex
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.cli.test_cli_run import read_until
from tests.engine.test_engine_restart import TINY
from tests.support.cli_modes import MODES, run_in
from tests.support.service_helpers import cockpit_command, cockpit_env, services_stopped

ASKING = f"{sys.executable} {TINY} --auth env:TINY_KEY"
SECRET = "sk-run-5d1e0b7c93a24f68"


@pytest.mark.parametrize("mode", MODES)
def test_off_a_terminal_run_exits_3_naming_the_ways(
    mode: str, cli_home: Path, project_dir: Path
) -> None:
    result = run_in(
        mode, cli_home, "run", "--cwd", str(project_dir), "--agent-cmd", ASKING, "hello"
    )
    assert result.returncode == 3, result.stderr
    assert "the agent asks you to sign in" in result.stderr
    assert "it offers: Use TINY_KEY (tiny-key, env_var)" in result.stderr
    assert "Traceback" not in result.stderr


def on_a_terminal(
    command: list[str], env: dict[str, str], cwd: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """`cockpit COMMAND` with a pseudo-terminal as its own terminal (getpass reads it) and
    its input; the process (stdout and stderr piped) and the terminal's other end."""
    master, slave = os.openpty()

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    process = subprocess.Popen(
        cockpit_command(*command),
        env=env,
        cwd=cwd,
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=own_terminal,
    )
    os.close(slave)
    return process, master


def drained(descriptor: int) -> bytes:
    """What the terminal shows that was not read yet (nothing blocks)."""
    seen = b""
    while select.select([descriptor], [], [], 0.2)[0]:
        try:
            data = os.read(descriptor, 65536)
        except OSError:  # the command closed its terminal
            break
        if not data:
            break
        seen += data
    return seen


@pytest.mark.parametrize("mode", MODES)
def test_on_a_terminal_the_user_signs_in_with_a_key_typed_unseen(
    mode: str, tmp_path: Path, project_dir: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    local = ("--local",) if mode == "local" else ()
    command = [*local, "run", "--cwd", str(project_dir), "--agent-cmd", ASKING, "hello"]
    with services_stopped(home):
        process, master = on_a_terminal(command, cockpit_env(home), tmp_path)
        terminal = os.fdopen(os.dup(master), "rb", buffering=0)
        try:
            assert process.stderr is not None
            asked = read_until(process.stderr, b"choose a number (Enter gives up): ").decode()
            assert "  1. Use TINY_KEY: Set TINY_KEY to your key." in asked
            os.write(master, b"1\n")
            prompt = read_until(terminal, b"kept for this session only): ")
            os.write(master, SECRET.encode() + b"\n")
            out, err = process.communicate(timeout=60)
            echoed = prompt + drained(master)
        finally:
            terminal.close()
            os.close(master)
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, err
    assert "Signed in with Use TINY_KEY." in err.decode()
    assert "ok" in out.decode()
    assert SECRET.encode() not in echoed + out + err
    held = [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert held == []


def test_agents_elsewhere_run_their_login_there_and_take_the_code_typed_here(
    tmp_path: Path, project_dir: Path
) -> None:
    """Through `--via` (the agents on another machine, as far as this client knows): the
    login runs there, what it prints shows here, the code typed here is its input, and the
    run goes on signed in."""
    home, far = tmp_path / "home", tmp_path / "far"
    home.mkdir()
    far.mkdir()
    code = "FAR-81c2-04de"
    agent = f"{sys.executable} {TINY} --auth terminal"
    bridge = shlex.join(cockpit_command("--data-dir", str(far), "service", "--stdio"))
    command = ["--via", bridge, "run", "--cwd", str(project_dir), "--agent-cmd", agent, "hi"]
    with services_stopped(far):
        env = {**cockpit_env(home), "TINY_LOGIN_CODE": code}
        process, master = on_a_terminal(command, env, tmp_path)
        try:
            assert process.stderr is not None
            asked = read_until(process.stderr, b"choose a number (Enter gives up): ").decode()
            assert "  1. Log in in a terminal" in asked
            os.write(master, b"1\n")
            shown = read_until(process.stderr, b"paste the code it shows:").decode()
            assert "https://login.example.com/device" in shown
            os.write(master, code.encode() + b"\n")
            out, err = process.communicate(timeout=90)
        finally:
            os.close(master)
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0, err
    assert b"logged in" in err and b"ok" in out
    assert (project_dir / "tiny-login").read_text() == code
    assert code.encode() not in out + err
    held = [p for p in far.rglob("*") if p.is_file() and code.encode() in p.read_bytes()]
    assert held == []
