"""The user's own commands (`!command`), as pure rules: what a prompt that starts with `!`
asks for, what a command's card says in its first line, what its chip says, what a
prompt's bubble says of the output it carried, what Esc and Ctrl+C do while a command
runs, and which prompts the history walks. Tested without an app."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cockpit.api import Attachment, ShellRun, Unknown, read_shell_run
from cockpit.text.textout import shell_ending
from cockpit.ui.one_line import clean_line, clip_cells
from cockpit.ui.status_rules import kilo
from store import Bubble

BANG = "!"
"""What starts a command typed in the prompt (`!!` sends a prompt that starts with `!`)."""

BLANK_COMMAND = "Type a command after ! (!! sends a prompt that starts with !)."
"""What the user is told when Enter finds `!` and nothing after it (the prompt stays)."""

OUTPUT_MARK = "▤"
"""What marks a command's output going with a prompt: its chip, the prompt's line."""

COMMAND_CELLS = 32
"""Cells a command takes at most in a chip or a prompt's attachment line."""


def shell_command(text: str) -> str | None:
    """The command a prompt asks to run: `!ls -la` is `ls -la` ("" for `!` alone or with
    blanks after it). None for any other prompt, `!!text` too (the agent gets `!text`)."""
    body = text.strip()
    if not body.startswith(BANG) or body.startswith(BANG * 2):
        return None
    return body[1:].strip()


def blank_command(text: str) -> bool:
    """True for `!` alone (or with only blanks after it): nothing to run, nothing to send."""
    return shell_command(text) == ""


def unbang(text: str) -> str:
    """What goes to the agent for a prompt that starts with `!!`: the same prompt with one
    `!` less (the way past a command); any other prompt as typed."""
    body = text.lstrip()
    return body[1:] if body.startswith(BANG * 2) else text


@dataclass(frozen=True)
class Header:
    """A command card's first line, and the state it shows (the card's style)."""

    text: str
    state: str
    """How the card is styled: running, ok (exit 0), error (another exit code, or it never
    started), killed (by the user, with its session, or cut when Cockpit stopped), or
    unknown."""


def card_header(run: ShellRun | Unknown) -> Header:
    """`$ ls -la · running… Esc kills it`, `· exit 0`, `· exit 2`, `· killed by SIGTERM`,
    `· could not start` (the row's text says why), `· cut: Cockpit stopped`."""
    if isinstance(run, Unknown):
        return Header("$ ? · a command Cockpit cannot read", "unknown")
    text = f"$ {clean_line(run.command)} · {shell_ending(run)}"
    if run.running:
        return Header(f"{text} Esc kills it", "running")
    if run.state == "exited":
        return Header(text, "ok" if run.exit_code == 0 else "error")
    return Header(text, CARD_STATES.get(run.state, "unknown"))


CARD_STATES = {"killed": "killed", "cut": "killed", "failed": "error"}
"""How a card is styled for a command in each state but running and `exited` (which its
code says)."""


def left_out_line(left_out: int) -> str:
    """What a card says of the output the row did not keep (its middle)."""
    return f"… {kilo(left_out)} characters of output in the middle were not kept"


def output_lines(output: str) -> int:
    """How many lines a command printed (a last line without its newline counts)."""
    return len(output.splitlines())


def lines_text(count: int) -> str:
    """`42 lines`, `1 line`, `no output`."""
    if count == 0:
        return "no output"
    return f"{kilo(count)} line{'' if count == 1 else 's'}"


def chip_label(command: str, lines: int) -> str:
    """A chip above the prompt: `▤ ls -la · 42 lines` (its ✕ is drawn apart)."""
    return f"{OUTPUT_MARK} {clip_cells(clean_line(command), COMMAND_CELLS)} · {lines_text(lines)}"


def attachment_line(attachment: Attachment) -> str:
    """What a prompt's bubble says of a command's output it carried:
    `▤ output of ls -la (1.2k chars)`."""
    command = clip_cells(clean_line(attachment.command), COMMAND_CELLS)
    return f"{OUTPUT_MARK} output of {command} ({kilo(attachment.characters)} chars)"


def shell_hint(text: str, root: str | None) -> str | None:
    """What the prompt's border says while it holds a command: where it will run."""
    if shell_command(text) is None:
        return None
    return f"shell command: runs in {root}" if root else "shell command"


# -- Esc and Ctrl+C ---------------------------------------------------------------------------


def escape_does(command: bool, turn: bool) -> str:
    """What Esc does: `stop` the session's commands (they run, or one is starting), else
    `cancel` the running turn, else `back` to the prompt (or the pending question)."""
    if command:
        return "stop"
    return "cancel" if turn else "back"


def interrupt_does(command: bool, turn: bool, draft: bool, again: bool) -> str:
    """What Ctrl+C does: `stop` the session's commands, else `cancel` the running turn,
    else `clear` the prompt, else `quit` when it is the second Ctrl+C in a row (`again`),
    else `warn` that the next one quits."""
    if command:
        return "stop"
    if turn:
        return "cancel"
    if draft:
        return "clear"
    return "quit" if again else "warn"


# -- the prompt history -----------------------------------------------------------------------


def history_entries(bubbles: Iterable[Bubble]) -> list[str]:
    """The prompts Up, Down and Ctrl+R walk, in order: what the user sent to the agent
    and the commands they ran (as typed: `!ls`)."""
    entries = []
    for bubble in bubbles:
        if bubble.kind == "user":
            entries.append(bubble.text)
        elif bubble.kind == "shell":
            run = read_shell_run(bubble.payload)
            if isinstance(run, ShellRun):
                entries.append(BANG + run.command)
    return entries
