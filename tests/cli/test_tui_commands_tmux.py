"""The user's own commands in a real terminal (tmux, 80x24, TERM xterm-256color, no
COLORTERM), through the service and with `--local`: `!sleep 30`, Enter and Esc in one
write kill it (the card says so); `!seq 3` leaves a chip above the prompt, and the prompt
typed next carries its output to the agent (its bubble says so) and the chip goes."""

from __future__ import annotations

import shutil

import pytest

from tests.cli.test_tui_detach_tmux import Terminal, terminal  # noqa: F401
from tests.cli.test_tui_drafts_tmux import MODES, open_tui
from tests.support.waiting import eventually

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def shows(tmux: Terminal, name: str, text: str) -> bool:
    return any(text in line for line in tmux.screen(name))


@pytest.mark.parametrize("mode", list(MODES))
async def test_a_command_killed_and_one_whose_output_goes_with_a_prompt(
    terminal: Terminal,  # noqa: F811
    mode: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLORTERM", raising=False)
    await open_tui(terminal, "one", mode)
    terminal.keys("one", "!sleep 30", "Enter", "Escape")
    await eventually(lambda: shows(terminal, "one", "$ sleep 30 · killed"), 15, "killed")
    terminal.keys("one", "!seq 3", "Enter")
    await eventually(lambda: shows(terminal, "one", "▤ seq 3 · 3 lines ✕"), 15, "the chip")
    terminal.keys("one", "what of it", "Enter")
    await eventually(lambda: shows(terminal, "one", "▤ output of seq 3"), 15, "the bubble")
    assert not shows(terminal, "one", "3 lines ✕")
    terminal.keys("one", "C-q")
