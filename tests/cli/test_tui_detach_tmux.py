"""The real TUI in a real terminal (tmux), attached to the service it starts: killed with
SIGKILL mid-reply, or hung up on (SIGHUP, what a closed terminal sends), it leaves the
turn running in the service; the next TUI shows the reply, complete, once, character for
character; and Ctrl+Q says that the agents go on."""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cockpit.agentkit.demo.prompts import turn_seed
from cockpit.agentkit.demo.texts import slow_text
from cockpit.api import Status
from cockpit.paths import DATABASE_NAME
from cockpit.protocol import STATUS
from cockpit.remote.launch import query_service, service_running
from tests.support.service_helpers import cockpit_command, pid_alive, stop_everything
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 100, 30

RAIL = 32
"""Columns of the session rail, its border included, at this width: the transcript is
to their right."""

START = 30.0
"""Seconds the TUI may take to start the service, the agent, and show the session ready."""

SLOW_REPLY = slow_text(random.Random(turn_seed("slow")))
"""What the demo agent answers to `slow`, streamed at 20 chunks a second (about 17 s)."""

REPLY_END = 60.0
"""Seconds the whole `slow` reply may take."""

TMUX_CONFIG = "set -g remain-on-exit on\nset -g default-terminal xterm-256color\n"
"""A pane stays when its program ends, to read what it printed last; its TERM is
xterm-256color, as over SSH (tmux sets TERM itself: `-e TERM=...` is overridden)."""

DETACHED = "Detached: the agents go on in the Cockpit service"


@dataclass
class Terminal:
    """A tmux server of the test's own (its own socket folder), running TUIs in sessions of
    WIDTH x HEIGHT."""

    sockets: Path
    """Where its socket lives (TMUX_TMPDIR): removed at the end with all in it."""
    config: Path
    home: Path
    project: Path

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-f", str(self.config), *args],
            env=terminal_env(self.sockets),
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout

    async def open(self, name: str) -> int:
        """Run `cockpit` (the TUI, attached to the store's service) in a new tmux session;
        the TUI's pid. The pane stays when it ends, to read what it printed last."""
        env = ["-e", f"COCKPIT_HOME={self.home}"]
        command = " ".join(cockpit_command())
        size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
        self.tmux("new-session", "-d", "-s", name, *size, *env, "-c", str(self.project), command)
        found: list[int] = []

        def running() -> bool:
            found[:] = self.tui_pids(name)
            return bool(found)

        await eventually(running, 10, f"the TUI to run in {name}")
        return found[0]

    def tui_pids(self, name: str) -> list[int]:
        """The TUI's process: the pane's, or its child when a shell runs it (none while
        tmux has not yet started it)."""
        pane = int(self.tmux("list-panes", "-t", name, "-F", "#{pane_pid}").split()[0])
        return [pid for pid in [pane, *children(pane)] if is_tui(pid)]

    def screen(self, name: str, history: bool = False) -> list[str]:
        """The lines the pane shows (and, with `history`, those scrolled off it)."""
        start = ["-S", "-"] if history else []
        return self.tmux("capture-pane", "-p", *start, "-t", name).split("\n")

    def dead(self, name: str) -> bool:
        return self.tmux("list-panes", "-t", name, "-F", "#{pane_dead}").strip() == "1"

    def keys(self, name: str, *keys: str) -> None:
        self.tmux("send-keys", "-t", name, *keys)


def terminal_env(sockets: Path) -> dict[str, str]:
    """The tests' environment for tmux and what it runs, without a terminal size
    (pytest-xdist's workers have COLUMNS and LINES set to 80 x 24, which would size every
    TUI whatever its window), the tmux server's socket in `sockets`."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["TMUX_TMPDIR"] = str(sockets)
    return env


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                stat = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
                if int(stat[1]) == pid:
                    found.append(int(entry.name))
    return found


def is_tui(pid: int) -> bool:
    """`python -m cockpit` with no command: the TUI, not its service."""
    try:
        argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"cockpit" in argv and b"service" not in argv


@pytest.fixture
def terminal(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Terminal]:
    """A tmux server for the test; at its end the server, the service and its agents are
    gone."""
    monkeypatch.delenv("COCKPIT_LOCAL", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "tmux.conf"
    config.write_text(TMUX_CONFIG)
    sockets = Path(tempfile.mkdtemp(prefix="cockpit-tmux-"))  # short, as a socket's must be
    made = Terminal(sockets, config, isolated_home, project)
    try:
        yield made
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            made.tmux("kill-server")
        shutil.rmtree(sockets, ignore_errors=True)
        stop_everything(isolated_home)


async def service_state(home: Path) -> dict[str, Any]:
    """What `cockpit service status` says (it attaches no client)."""
    answer = await query_service(home, STATUS)
    assert answer is not None, "no service runs"
    return answer


async def the_session(home: Path, status: str) -> str:
    """Wait for the one live session of the service to be in `status`; its id."""
    found: list[str] = []

    async def there() -> bool:
        answer = await query_service(home, STATUS)  # None until the TUI has started it
        sessions = (answer or {}).get("sessions") or []
        found[:] = [s["id"] for s in sessions if s["status"] == status]
        return len(sessions) == 1 and bool(found)

    await eventually(there, REPLY_END, f"the session to be {status}")
    return found[0]


def stored(home: Path, session: str) -> list[tuple[str, str]]:
    """The session's rows in the store, as (kind, text), read as `sqlite3` would."""
    with contextlib.closing(
        sqlite3.connect(f"file:{home / DATABASE_NAME}?mode=ro", uri=True, timeout=10)
    ) as db:
        return db.execute(
            "SELECT kind, text FROM messages WHERE session = ? ORDER BY seq", (session,)
        ).fetchall()


def replied(home: Path, session: str) -> int:
    """Characters of reply stored so far."""
    return sum(len(text) for kind, text in stored(home, session) if kind == "agent")


def transcript_words(screen: list[str]) -> list[str]:
    """The words the transcript shows, top to bottom: right of the rail, above the status
    line, without the scrollbar."""
    lines = []
    for line in screen:
        if re.match(r"\s*(ready|working|starting)\b.* · ", line[RAIL:]):
            break
        lines.append(line[RAIL:].rstrip(" ▁▂▃▄▅▆▇█"))
    return " ".join(lines).split()


async def test_a_killed_tui_leaves_the_turn_running_and_the_next_shows_it_whole(
    terminal: Terminal,
) -> None:
    """SIGKILL of the TUI mid-reply: the service streams on with nobody attached; a new
    TUI shows the reply once it ends, and the store holds it, exactly, once."""
    tui = await terminal.open("one")
    session = await the_session(terminal.home, Status.READY)
    terminal.keys("one", "slow", "Enter")
    await eventually(
        lambda: any("working" in line for line in terminal.screen("one")), START, "the turn"
    )
    await eventually(lambda: replied(terminal.home, session) > 100, 20, "the reply, stored")
    os.kill(tui, signal.SIGKILL)
    await eventually(lambda: not pid_alive(tui), 10, "the TUI to die")
    at_kill = replied(terminal.home, session)

    async def streams_on_alone() -> bool:
        state = await service_state(terminal.home)
        statuses = {s["id"]: s["status"] for s in state["sessions"]}
        alone = state["clients"] == 0 and statuses.get(session) == Status.WORKING
        return alone and replied(terminal.home, session) > at_kill + 100

    await eventually(streams_on_alone, 20, "the reply to grow with no TUI attached")
    assert len(SLOW_REPLY) > replied(terminal.home, session), "it ended: nothing was tested"

    await terminal.open("two")
    await the_session(terminal.home, Status.READY)  # the turn has ended
    await eventually(
        lambda: any("ready ·" in line for line in terminal.screen("two")), REPLY_END, "the end"
    )
    rows = stored(terminal.home, session)
    assert [kind for kind, _ in rows] == ["user", "agent"]
    assert rows[1][1] == SLOW_REPLY
    assert "".join(text for _, text in rows).count(SLOW_REPLY) == 1

    reply_words = [word for word in SLOW_REPLY.split() if word != "#"]
    await eventually(
        lambda: len(transcript_words(terminal.screen("two"))) > 40, 10, "the reply on screen"
    )
    shown = transcript_words(terminal.screen("two"))
    assert shown == reply_words[-len(shown) :], "\n".join(terminal.screen("two"))


async def test_a_hung_up_tui_ends_and_the_agents_go_on(terminal: Terminal) -> None:
    """SIGHUP (the terminal closed, the SSH link dropped): the TUI ends, its service and the
    turn it runs do not."""
    tui = await terminal.open("one")
    session = await the_session(terminal.home, Status.READY)
    terminal.keys("one", "slow", "Enter")
    await eventually(lambda: replied(terminal.home, session) > 100, START, "the reply, stored")
    os.kill(tui, signal.SIGHUP)
    await eventually(lambda: not pid_alive(tui), 10, "the TUI to end on SIGHUP")
    at_hangup = replied(terminal.home, session)

    async def streams_on() -> bool:
        state = await service_state(terminal.home)
        statuses = {s["id"]: s["status"] for s in state["sessions"]}
        working = statuses.get(session) == Status.WORKING and state["clients"] == 0
        return working and replied(terminal.home, session) > at_hangup + 100

    await eventually(streams_on, 20, "the turn to go on with no TUI")


async def test_ctrl_q_detaches_and_says_so(terminal: Terminal) -> None:
    """A plain Ctrl+Q: the TUI exits at once (no question), saying that the agents go on in
    the service, which does."""
    await terminal.open("one")
    await the_session(terminal.home, Status.READY)
    await eventually(
        lambda: any("ready ·" in line for line in terminal.screen("one")), START, "the TUI"
    )
    terminal.keys("one", "C-q")
    await eventually(lambda: terminal.dead("one"), 10, "the TUI to exit")
    printed = terminal.screen("one", history=True)
    assert any(DETACHED in line for line in printed), printed
    assert service_running(terminal.home)
