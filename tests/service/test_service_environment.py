"""The user's environment reaches the agents through the service, with real processes: an
agent runs with the environment and umask of the command that started it, not with the
service's (which a stale start-up left it); a prompt that restarts an agent brings its own;
`service restart` starts the agents again with its own; a variable of this machine never
crosses a link to another; and the environment appears in no log, store, command line or
output."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cockpit.paths import agents_dir
from tests.engine.test_engine_restart import TINY
from tests.support.service_helpers import (
    cockpit,
    cockpit_command,
    cockpit_env,
    service_pid,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

DEMO = str(agents_dir() / "demo_agent.py")


def dumping_agent(out: Path) -> str:
    """An agent command (`--agent-cmd`) that writes the environment and the umask it was
    started with to `out` and `out.umask`, then becomes the demo agent."""
    script = 'env > "$0"; umask > "$0.umask"; AGENT_OUT="$0" exec "$@"'
    return shlex.join(["sh", "-c", script, str(out), sys.executable, DEMO])


def environment_in(out: Path) -> dict[str, str]:
    """What `dumping_agent` wrote (one variable a line; values of one line only)."""
    pairs = (line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return dict(pairs)


def run_dumping(home: Path, out: Path, env: dict[str, str], *prefix: str) -> str:
    """`cockpit [PREFIX] run --agent-cmd DUMPING --yes --keep hello` (its agent stays up);
    its stderr (the session's id is on it, with --verbose)."""
    done = cockpit(
        *prefix, "run", "--agent-cmd", dumping_agent(out), "--yes", "--keep", "--verbose",
        "hello",
        home=home, env_extra=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


def session_of(stderr: str) -> str:
    """The id `cockpit run --verbose` names."""
    lines = [line for line in stderr.splitlines() if line.startswith("cockpit: session ")]
    return lines[-1].split()[-1]


def wait_for(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    """Poll `condition` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.05)


def test_an_agent_gets_the_environment_of_the_command_not_the_service_s(
    service_home: Path, tmp_path: Path
) -> None:
    """The first command starts the service with its environment; the second one's agent
    sees the second one's (a key exported since, a variable unset since)."""
    first, second = tmp_path / "first.env", tmp_path / "second.env"
    run_dumping(service_home, first, {"FOO": "first", "ONLY_FIRST": "1"})
    pid = service_pid(service_home)
    assert pid is not None
    run_dumping(service_home, second, {"FOO": "second", "ANTHROPIC_API_KEY": "sk-exported-later"})
    assert service_pid(service_home) == pid  # the same service ran both
    assert environment_in(first)["FOO"] == "first"
    seen = environment_in(second)
    assert seen["FOO"] == "second"
    assert seen["ANTHROPIC_API_KEY"] == "sk-exported-later"
    assert "ONLY_FIRST" not in seen


def test_an_agent_gets_the_umask_of_the_command(service_home: Path, tmp_path: Path) -> None:
    run_dumping(service_home, tmp_path / "first.env", {})  # the service starts with the usual 022
    out = tmp_path / "second.env"
    command = cockpit_command("run", "--agent-cmd", dumping_agent(out), "--yes", "hello")
    masked = ["sh", "-c", 'umask 077; exec "$@"', "sh", *command]
    done = subprocess.run(
        masked, env=cockpit_env(service_home), cwd=service_home.parent, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "second.env.umask").read_text().strip() == "0077"
    assert (tmp_path / "first.env.umask").read_text().strip() == "0022"


def agent_pids(out: Path) -> list[int]:
    """The live processes running the dumping agent that writes `out` (its environment
    names `out`: `dumping_agent` puts it in before it becomes the demo agent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes()
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if DEMO.encode() in line and f"AGENT_OUT={out}".encode() in environ:
                found.append(int(entry.name))
    return found


def test_a_prompt_that_restarts_an_agent_brings_its_environment(
    service_home: Path, tmp_path: Path
) -> None:
    """An agent that died restarts with the environment of the prompt that restarts it:
    `cockpit send` from a shell where the user has exported a new value."""
    out = tmp_path / "agent.env"
    session = session_of(run_dumping(service_home, out, {"FOO": "first"}))
    sent = cockpit(
        "send", session, "hello", "--wait", home=service_home, env_extra={"FOO": "running"}
    )
    assert sent.returncode == 0, sent.stderr
    assert environment_in(out)["FOO"] == "first"  # it ran: the new value waits for a start
    for pid in agent_pids(out):
        subprocess.run(["kill", "-KILL", str(pid)], check=False)
    wait_for(
        lambda: '"exited"' in cockpit("ls", "--json", home=service_home).stdout,
        "the session to show its agent exited",
    )
    sent = cockpit(
        "send", session, "hello", "--wait", home=service_home, env_extra={"FOO": "third"}
    )
    assert sent.returncode == 0, sent.stderr
    assert environment_in(out)["FOO"] == "third"


def test_service_restart_starts_the_agents_again_with_its_environment(
    service_home: Path, tmp_path: Path
) -> None:
    """After exporting a key, `cockpit service restart` is how the running agents get it."""
    out = tmp_path / "agent.env"
    session = session_of(run_dumping(service_home, out, {"FOO": "first"}))
    cockpit("send", session, "hello", "--wait", home=service_home, env_extra={"FOO": "first"})
    before = service_pid(service_home)
    done = cockpit("service", "restart", "--yes", home=service_home, env_extra={"FOO": "restarted"})
    assert done.returncode == 0, done.stderr
    assert "Started 1 agent(s) again with this command's environment" in done.stderr
    assert service_pid(service_home) not in (None, before)
    wait_for(lambda: environment_in(out).get("FOO") == "restarted", "the agent to restart")


def test_a_variable_of_this_machine_never_reaches_an_agent_through_a_link(
    service_home: Path, tmp_path: Path
) -> None:
    """Through `--via` (as through `--remote`'s ssh), the client sends no environment: the
    far side's bridge puts in its own. Here the far side is this machine without the
    variable; the service itself was started by a command that had it."""
    secret = "local-value-4d1c9a"
    run_dumping(service_home, tmp_path / "first.env", {"LOCAL_ONLY": secret})  # the service has it
    sent = tmp_path / "what-crossed"
    far_side = shlex.join(
        ["sh", "-c", 'tee "$0" | exec "$@"', str(sent), "env", "-u", "LOCAL_ONLY",
         "REMOTE_ONLY=there", *cockpit_command("--data-dir", str(service_home), "service", "--stdio")]
    )  # fmt: skip
    out = tmp_path / "remote.env"
    run_dumping(service_home, out, {"LOCAL_ONLY": secret}, "--via", far_side)
    seen = environment_in(out)
    assert seen["REMOTE_ONLY"] == "there"
    assert "LOCAL_ONLY" not in seen
    assert secret not in sent.read_text()  # nothing of it crossed the link


def test_the_environment_shows_nowhere(service_home: Path, tmp_path: Path) -> None:
    """A value of the user's environment is in no log, no store, no command line, no
    `events --json` and no error sent to a client, even after a start that failed."""
    cockpit("run", "--agent", "demo", "--yes", "hello", home=service_home)  # the service, unmarked
    mark = "zq-environment-mark-7f3e"
    env = {"SOME_TOKEN": mark, "OTHER": mark}
    run_dumping(service_home, tmp_path / "agent.env", env)
    failed = cockpit(
        "run", "--agent-cmd", "no-such-agent-program", "hello", home=service_home, env_extra=env
    )
    assert failed.returncode == 3
    events = cockpit("events", "--json", home=service_home, env_extra=env)
    shows = cockpit("ls", "--json", home=service_home, env_extra=env)
    for output in (failed, events, shows):
        assert mark not in output.stdout + output.stderr
    for path in service_home.rglob("*"):
        if path.is_file():
            assert mark.encode() not in path.read_bytes(), path
    pid = service_pid(service_home)
    assert pid is not None
    for name in ("cmdline", "environ"):
        assert mark.encode() not in Path(f"/proc/{pid}/{name}").read_bytes()


@pytest.mark.parametrize("local", [False, True], ids=["service", "local"])
def test_a_file_the_agent_writes_gets_the_umask_of_the_command(
    service_home: Path, tmp_path: Path, local: bool
) -> None:
    """The agent's fs/write_text_file makes a new file and folder with the modes the
    umask of the command that started it gives: the service's own umask (022, as the
    first command started it) made them 0644 and 0755 under a command with umask 077."""
    project = tmp_path / "project"
    project.mkdir()
    run_dumping(service_home, tmp_path / "first.env", {})  # the service starts with the usual 022
    tiny = shlex.join([sys.executable, TINY])
    prefix = ("--local",) if local else ()
    command = cockpit_command(*prefix, "run", "--cwd", str(project), "--agent-cmd", tiny)
    masked = ["sh", "-c", 'umask 077; exec "$@"', "sh", *command, "write=made/notes.txt"]
    done = subprocess.run(
        masked, env=cockpit_env(service_home), cwd=service_home.parent, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout
    assert (project / "made" / "notes.txt").stat().st_mode & 0o777 == 0o600
    assert (project / "made").stat().st_mode & 0o777 == 0o700
