"""Alt+W and the keys after it sent in one write to a real terminal (tmux, 80x24, TERM
xterm-256color, no COLORTERM), through the service and with `--local`: the new-session
dialog ticks its worktree box, as it does when Alt+W comes alone, and the session made
works in a worktree of its own."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from cockpit.paths import DATABASE_NAME
from tests.cli.test_tui_commands_tmux import shows
from tests.cli.test_tui_detach_tmux import Terminal, terminal  # noqa: F401
from tests.cli.test_tui_drafts_tmux import MODES, open_tui
from tests.support.git_repos import make_repo
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.mark.parametrize("mode", list(MODES))
async def test_alt_w_then_arrows_in_one_write_makes_a_worktree_session(
    terminal: Terminal,  # noqa: F811
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLORTERM", raising=False)
    make_repo(terminal.project)
    await open_tui(terminal, "alt", mode)
    terminal.keys("alt", "C-n")
    await eventually(lambda: shows(terminal, "alt", "Own worktree"), 15, "the dialog")
    terminal.keys("alt", "M-w", "Down", "Up", "Enter")
    await eventually(lambda: worktrees(terminal.home) == 1, 20, "a worktree session")
    assert not shows(terminal, "alt", "^w")
    terminal.keys("alt", "C-q")


def worktrees(home: Path) -> int:
    """How many stored sessions work in a worktree of their own, read as `sqlite3` would."""
    database = home / DATABASE_NAME
    if not database.exists():
        return 0
    with contextlib.closing(
        sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    ) as db:
        infos = [row[0] or "" for row in db.execute("SELECT info FROM sessions")]
    return sum('"worktree"' in info for info in infos)
