"""The pure rules of the user's own commands (`cockpit.ui.shell_rules`): what `!` and `!!`
ask for, a card's first line, a chip's label, a prompt's attachment line, what Esc and
Ctrl+C do while a command runs, and the history; and each session's chips
(`cockpit.ui.shell_chips.ChipShelf`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from cockpit.api import Attachment, ShellRun, Unknown, read_shell_run
from cockpit.ui.shell_chips import MAX_CHIPS, Chip, ChipShelf
from cockpit.ui.shell_rules import (
    COMMAND_CELLS,
    attachment_line,
    blank_command,
    card_header,
    chip_label,
    escape_does,
    history_entries,
    interrupt_does,
    left_out_line,
    lines_text,
    output_lines,
    shell_command,
    shell_hint,
    unbang,
)
from cockpit.ui.slash import for_agent
from store import Bubble

# -- `!` and `!!` -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "command"),
    [
        ("!ls -la", "ls -la"),
        ("! ls", "ls"),
        ("  !git status  ", "git status"),
        ("!echo a\necho b", "echo a\necho b"),
        ("!", ""),
        ("!   ", ""),
        ("!!ls", None),
        ("!!", None),
        ("ls", None),
        ("tell me !ls", None),
        ("/help", None),
    ],
)
def test_what_a_bang_prompt_runs(typed: str, command: str | None) -> None:
    assert shell_command(typed) == command


def test_a_bang_alone_is_blank() -> None:
    assert blank_command("!") and blank_command("!  \n ")
    assert not blank_command("!ls") and not blank_command("!!") and not blank_command("")


@pytest.mark.parametrize(
    ("typed", "sent"),
    [
        ("!!ls", "!ls"),
        ("  !!important: fix it", "!important: fix it"),
        ("!!", "!"),
        ("plain prompt", "plain prompt"),
        ("  keep my spaces", "  keep my spaces"),
    ],
)
def test_a_double_bang_goes_to_the_agent_with_one_less(typed: str, sent: str) -> None:
    assert unbang(typed) == sent


def test_a_double_bang_and_a_double_slash_compose() -> None:
    """`!!//x` is a prompt `!//x`: one escape at a time."""
    assert for_agent(unbang("!!//help")) == "!//help"
    assert for_agent(unbang("//help")) == "/help"


@given(st.text())
def test_a_prompt_is_a_command_or_goes_to_the_agent(text: str) -> None:
    """Every prompt is either a command (`!x`) or a prompt for the agent; never both."""
    command = shell_command(text)
    if command is not None:
        assert text.strip().startswith("!") and not text.strip().startswith("!!")
        assert unbang(text) == text
    elif text.lstrip().startswith("!!"):
        assert unbang(text) == text.lstrip()[1:]


# -- the card ---------------------------------------------------------------------------------


def run(**payload: Any) -> ShellRun | Unknown:
    return read_shell_run({"command": "ls -la", **payload})


@pytest.mark.parametrize(
    ("payload", "text", "state"),
    [
        ({"state": "running"}, "$ ls -la · running… Esc kills it", "running"),
        ({"state": "exited", "exitCode": 0}, "$ ls -la · exit 0", "ok"),
        ({"state": "exited", "exitCode": 2}, "$ ls -la · exit 2", "error"),
        ({"state": "killed", "signal": "SIGTERM"}, "$ ls -la · killed by SIGTERM", "killed"),
        ({"state": "killed"}, "$ ls -la · killed", "killed"),
        ({"state": "failed"}, "$ ls -la · could not start", "error"),
        ({"state": "cut"}, "$ ls -la · cut: Cockpit stopped", "killed"),
        ({"state": "nonsense"}, "$ ls -la · could not start", "error"),
    ],
)
def test_a_cards_first_line(payload: dict[str, Any], text: str, state: str) -> None:
    header = card_header(run(**payload))
    assert (header.text, header.state) == (text, state)


def test_a_card_of_an_unreadable_row_says_so() -> None:
    header = card_header(read_shell_run({"state": "running"}))
    assert header.state == "unknown" and "cannot read" in header.text


def test_a_multiline_command_is_one_line_on_its_card() -> None:
    header = card_header(read_shell_run({"command": "echo a\necho b", "state": "running"}))
    assert header.text == "$ echo a echo b · running… Esc kills it"


def test_output_left_out_is_counted() -> None:
    assert left_out_line(12_345) == "… 12.3k characters of output in the middle were not kept"


# -- the chip ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "count"), [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("a\n\nb\n", 3)]
)
def test_output_lines(output: str, count: int) -> None:
    assert output_lines(output) == count


def test_a_chips_label() -> None:
    assert chip_label("ls -la", 42) == "▤ ls -la · 42 lines"
    assert chip_label("pwd", 1) == "▤ pwd · 1 line"
    assert chip_label("true", 0) == "▤ true · no output"
    assert lines_text(12_000) == "12k lines"


def test_a_long_command_is_cut_in_its_chip() -> None:
    label = chip_label("x" * 200 + "\x1b]0;title\x07", 3)
    command = label.removeprefix("▤ ").removesuffix(" · 3 lines")
    assert cell_len(command) == COMMAND_CELLS and command.endswith("…")
    assert "\x1b" not in label


def test_a_prompts_attachment_line() -> None:
    assert attachment_line(Attachment("ls -la", 1234)) == "▤ output of ls -la (1.2k chars)"
    assert attachment_line(Attachment("pwd", 12)) == "▤ output of pwd (12 chars)"


def test_the_prompt_says_where_a_command_runs() -> None:
    assert shell_hint("!ls", "/home/me/project") == "shell command: runs in /home/me/project"
    assert shell_hint("!", None) == "shell command"
    assert shell_hint("!!ls", "/p") is None and shell_hint("ls", "/p") is None


# -- Esc and Ctrl+C ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "turn", "does"),
    [(True, True, "stop"), (True, False, "stop"), (False, True, "cancel"), (False, False, "back")],
)
def test_what_esc_does(command: bool, turn: bool, does: str) -> None:
    assert escape_does(command, turn) == does


@pytest.mark.parametrize(
    ("command", "turn", "draft", "again", "does"),
    [
        (True, True, True, True, "stop"),
        (True, False, False, True, "stop"),
        (False, True, True, True, "cancel"),
        (False, False, True, True, "clear"),
        (False, False, False, True, "quit"),
        (False, False, False, False, "warn"),
    ],
)
def test_what_ctrl_c_does(command: bool, turn: bool, draft: bool, again: bool, does: str) -> None:
    assert interrupt_does(command, turn, draft, again) == does


# -- the history ------------------------------------------------------------------------------


def test_the_history_holds_prompts_and_commands_in_order() -> None:
    bubbles = [
        Bubble("user:1", 1, "user", 1, "first prompt"),
        Bubble("agent:1", 2, "agent", 1, "a reply"),
        Bubble("shell:a", 3, "shell", 1, "out", {"command": "ls -la", "state": "exited"}),
        Bubble("shell:b", 4, "shell", 1, "", {"state": "exited"}),  # unreadable: left out
        Bubble("user:2", 5, "user", 2, "second prompt"),
    ]
    assert history_entries(bubbles) == ["first prompt", "!ls -la", "second prompt"]


# -- the chips of each session ----------------------------------------------------------------


def chip(number: int) -> Chip:
    return Chip(f"shell:{number}", f"command {number}", number)


def test_chips_are_kept_per_session_and_bounded() -> None:
    told: list[str] = []
    shelf = ChipShelf(told.append)
    for number in range(MAX_CHIPS + 2):
        shelf.add("s1", chip(number))
    shelf.add("s2", chip(99))
    assert shelf.keys("s1") == tuple(f"shell:{n}" for n in range(2, MAX_CHIPS + 2))
    assert shelf.keys("s2") == ("shell:99",)
    assert shelf.keys("other") == () and shelf.keys(None) == ()
    assert told == ["s1"] * (MAX_CHIPS + 2) + ["s2"]


def test_a_chip_added_twice_is_one_chip() -> None:
    shelf = ChipShelf()
    shelf.add("s", chip(1))
    shelf.add("s", chip(2))
    shelf.add("s", chip(1))
    assert shelf.keys("s") == ("shell:2", "shell:1")


def test_removing_chips() -> None:
    told: list[str] = []
    shelf = ChipShelf(told.append)
    for number in range(3):
        shelf.add("s", chip(number))
    told.clear()
    assert shelf.drop_last("s") and shelf.keys("s") == ("shell:0", "shell:1")
    assert shelf.drop("s", "shell:0") and shelf.keys("s") == ("shell:1",)
    assert not shelf.drop("s", "shell:0") and not shelf.drop("other", "shell:1")
    assert shelf.drop_last("s") and not shelf.drop_last("s")
    assert told == ["s", "s", "s"]


def test_chips_sent_go_and_the_others_stay() -> None:
    shelf = ChipShelf()
    for number in range(3):
        shelf.add("s", chip(number))
    shelf.sent("s", ["shell:0", "shell:2", "shell:9"])
    assert shelf.keys("s") == ("shell:1",)
    assert shelf.of("s")[0].label == "▤ command 1 · 1 line"
