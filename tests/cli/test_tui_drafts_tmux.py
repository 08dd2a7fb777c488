"""The draft and Ctrl+Q typed in one burst in a real terminal (tmux, 80x24, TERM
xterm-256color, no COLORTERM), through the service and with `--local`: the draft stored
is what the keys before Ctrl+Q made of it, and the next TUI shows it."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from cockpit.paths import DATABASE_NAME
from tests.cli.test_tui_detach_tmux import START, Terminal, terminal  # noqa: F401
from tests.support.service_helpers import cockpit_command
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

WIDTH, HEIGHT = 80, 24

READY = "ready · "
STOPPED = "stopped: a prompt starts it"
"""How the status line shows a session reopened with `--local`: its agent starts with the
next prompt."""

MODES = {"service": (), "local": ("--local",)}


async def open_tui(tmux: Terminal, name: str, mode: str, status: str = READY) -> None:
    """Run `cockpit` (with `--local` in that mode) at 80x24 in a new tmux session, and
    wait for the status line to show `status` (Ctrl+Q with `--local` asks while an agent
    starts)."""
    env = ["-e", f"COCKPIT_HOME={tmux.home}"]  # TERM: the config says xterm-256color
    command = " ".join(cockpit_command(*MODES[mode]))
    size = ["-x", str(WIDTH), "-y", str(HEIGHT)]
    tmux.tmux("new-session", "-d", "-s", name, *size, *env, "-c", str(tmux.project), command)
    await eventually(lambda: any(status in line for line in tmux.screen(name)), START, "the TUI")


def stored_draft(home: Path) -> str:
    """The draft of the one stored session, read as `sqlite3` would."""
    with contextlib.closing(
        sqlite3.connect(f"file:{home / DATABASE_NAME}?mode=ro", uri=True, timeout=10)
    ) as db:
        drafts = [row[0] for row in db.execute("SELECT draft FROM sessions")]
    assert len(drafts) == 1, drafts
    return str(drafts[0])


async def detach_with(tmux: Terminal, name: str, *keys: str) -> None:
    """Send `keys` in one write (tmux's send-keys: one burst), and wait for the TUI to
    end."""
    tmux.keys(name, *keys)
    await eventually(lambda: tmux.dead(name), 10, "the TUI to end")


async def draft_becomes(home: Path, before: str) -> str:
    """The stored draft once it differs from `before` (the store writes it within a
    moment of the TUI's end), or `before` if it never does."""
    with contextlib.suppress(AssertionError):
        await eventually(lambda: stored_draft(home) != before, 5, "the draft stored")
    return stored_draft(home)


@pytest.mark.parametrize("mode", list(MODES))
async def test_the_draft_and_ctrl_q_in_one_burst(
    terminal: Terminal,  # noqa: F811
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "abc", Ctrl+Q, "def" in one write: "abc" is stored and comes back; then Ctrl+U and
    Ctrl+Q in one write: the draft is stored cleared, and comes back empty."""
    monkeypatch.delenv("COLORTERM", raising=False)
    await open_tui(terminal, "one", mode)
    await detach_with(terminal, "one", "abc", "C-q", "def")
    assert await draft_becomes(terminal.home, "") == "abc"

    reopened = STOPPED if mode == "local" else READY
    await open_tui(terminal, "two", mode, reopened)
    prompt = [line for line in terminal.screen("two") if "abc" in line]
    assert len(prompt) == 1 and "abcdef" not in prompt[0], terminal.screen("two")
    await detach_with(terminal, "two", "C-u", "C-q")
    assert await draft_becomes(terminal.home, "abc") == ""

    await open_tui(terminal, "three", mode, reopened)
    assert not any("abc" in line for line in terminal.screen("three"))
