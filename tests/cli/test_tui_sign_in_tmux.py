"""A terminal sign-in in a real terminal (tmux, 80x24, TERM xterm-256color, no COLORTERM),
through the service and with `--local`: the agent asks to sign in as it starts, `/login`
and Enter in one write hand the terminal to the agent's own login, which runs in the
session's folder with the way's variables, and the screen comes back signed in."""

from __future__ import annotations

import shlex
import shutil
import sys

import pytest

from tests.cli.test_tui_commands_tmux import shows
from tests.cli.test_tui_detach_tmux import START, Terminal, terminal  # noqa: F401
from tests.cli.test_tui_drafts_tmux import HEIGHT, MODES, READY, WIDTH
from tests.engine.test_engine_restart import TINY
from tests.support.service_helpers import cockpit_command
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.parametrize("mode", list(MODES))
async def test_a_terminal_login_runs_in_the_users_terminal(
    terminal: Terminal,  # noqa: F811
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLORTERM", raising=False)
    agent = f"{sys.executable} {TINY} --auth terminal"
    command = shlex.join(cockpit_command(*MODES[mode], "--agent-cmd", agent))
    env = ["-e", f"COCKPIT_HOME={terminal.home}"]
    size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
    terminal.tmux(
        "new-session", "-d", "-s", "one", *size, *env, "-c", str(terminal.project), command
    )
    await eventually(lambda: shows(terminal, "one", "/login"), START, "the ways to sign in")
    terminal.keys("one", "/login", "Enter", "Enter")
    await eventually(lambda: shows(terminal, "one", READY), START, "the agent signed in")
    assert (terminal.project / "tiny-login").read_text() == "yes"
    terminal.keys("one", "C-q")
