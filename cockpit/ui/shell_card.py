"""The card of a command the user ran (`!command`): its first line says what ran and how it
stands (`$ ls -la · exit 0`), its output's last lines below, live while it runs. It is
the user's row, so it looks like the user's prompt, not like the agent's tool cards. What
the first line says is `cockpit.ui.shell_rules`' rule."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.reactive import reactive

from cockpit.api import ShellRun, read_shell_run
from cockpit.text.sanitize import printable
from cockpit.ui.bubbles import BubbleWidget
from cockpit.ui.shell_rules import card_header, left_out_line
from cockpit.ui.tool_card import TERMINAL_LINES
from store import Bubble

HEADER_STYLES = {
    "running": "bold $status-working",
    "ok": "bold",
    "error": "bold $status-error",
    "killed": "bold $text-muted",
    "unknown": "bold $text-muted",
}
"""How the first line is drawn for each state of the command (theme colours)."""


class ShellCard(BubbleWidget):
    """A command the user ran: open on its output's last lines (Enter or a click folds
    it to its first line), `c` copies the command and its output."""

    DEFAULT_CSS = """
    ShellCard {
        background: $bubble-user-background;
        border-left: thick $bubble-user-border;
        padding: 0 1;
    }
    ShellCard:focus {
        background: $bubble-user-background;
        border-left: outer $bubble-focus-border;
    }
    ShellCard.-collapsed {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_card", "Expand", show=False),
        Binding("c", "copy", "Copy", show=False),
    ]
    expanded: reactive[bool] = reactive(True, layout=True)

    def __init__(self, bubble: Bubble) -> None:
        super().__init__(bubble)
        self.shell_run = read_shell_run(bubble.payload)
        """The command, read from the row's payload once per update."""

    def refresh_from(self, bubble: Bubble) -> None:
        self.shell_run = read_shell_run(bubble.payload)
        super().refresh_from(bubble)

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(not expanded, "-collapsed")

    def action_toggle_card(self) -> None:
        """Open or fold the card."""
        self.expanded = not self.expanded

    def on_click(self) -> None:
        self.action_toggle_card()

    def render(self) -> Content:
        header = card_header(self.shell_run)
        mark = "▾" if self.expanded else "▸"
        line = Content.styled(f"{mark} {printable(header.text)}", HEADER_STYLES[header.state])
        if not self.expanded:
            return line
        return Content.assemble(line, "\n", self._output())

    def _output(self) -> Content:
        """The output's last lines, saying what is not shown."""
        lines = printable(self.text).splitlines()
        run = self.shell_run
        if not lines and isinstance(run, ShellRun):
            return Content.styled("⋯ no output yet" if run.running else "(no output)", "dim")
        shown = lines[-TERMINAL_LINES:]
        notes = []
        if len(lines) > len(shown):
            notes.append("… earlier output not shown")
        if isinstance(run, ShellRun) and run.left_out:
            notes.append(left_out_line(run.left_out))
        body = Content("\n".join(shown))
        if not notes:
            return body
        return Content.assemble(Content.styled("\n".join(notes), "dim"), "\n", body)

    def copy_text(self) -> str:
        run = self.shell_run
        command = run.command if isinstance(run, ShellRun) else ""
        return f"$ {command}\n{printable(self.text)}".rstrip("\n")
