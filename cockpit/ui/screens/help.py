"""The help screen: every key in one place, and the rail's glyphs."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from cockpit.ui.dialog import Dialog, escape

KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt (or take the highlighted completion)"),
    ("Ctrl+J, Shift+Enter", "new line in the prompt (Ctrl+J works over any SSH)"),
    ("Up / Down", "earlier prompts (from the first / last line)"),
    ("Ctrl+R", "search earlier prompts: Enter takes one, Esc leaves"),
    ("/  @", "complete a command, or a file under the session's folder"),
    ("!command", "run it in the session's folder (!! sends a prompt starting with !)"),
    ("Backspace", "in an empty prompt: remove the newest command output chip"),
    ("Esc", "kill your command; else cancel the turn (and its question); else back"),
    ("Ctrl+C", "kill your command; else cancel the turn; else clear; again, as Ctrl+Q"),
    ("Shift+Tab", "next mode of the agent (in the prompt)"),
    ("Ctrl+T", "the agent's modes and options (model, thinking...)"),
    ("1-9", "answer the agent's question with that option"),
    ("Tab / Space", "in the agent's form: next field / tick; Enter sends, Esc cancels"),
    ("Ctrl+O", "inbox: everything waiting for you, in every session"),
    ("Enter in the inbox", "open its session; on a form, fill it in there (o opens)"),
    ("Ctrl+G", "this session's question, else the next session that needs you"),
    ("Ctrl+N", "new session"),
    ("Ctrl+Up / Ctrl+Down", "previous / next session"),
    ("F2", "rename the session"),
    ("F4", "close the session: its agent stops, the transcript stays"),
    ("F8", "delete the session"),
    ("Ctrl+B", "show or hide the session rail (hidden below 80 columns)"),
    ("p  on the rail", "the session's plan"),
    ("PageUp / PageDown", "scroll the transcript (from a one-line prompt too)"),
    ("Ctrl+Home, Ctrl+End", "the first message / the newest output"),
    ("F3", "copy the newest reply, or the focused bubble"),
    ("Tab", "the prompt, then the transcript, then the rail"),
    ("Up / Down, k / j", "in the transcript: previous / next bubble"),
    ("c  on a bubble", "copy it to the clipboard (works over SSH)"),
    ("Enter  on a card", "open or fold a thought or a tool call"),
    ("f / s  on a diff", "the whole diff / side by side or unified"),
    ("F6", "a worktree session's changes: comment, commit, merge, push, discard"),
    ("Ctrl+P", "command palette: sessions, agents, themes, actions"),
    ("F1", "this help"),
)
"""Every key but Ctrl+Q, as the help screen lists them."""

DETACH = ("Ctrl+Q", "detach: the agents go on in the Cockpit service; `cockpit` attaches again")
QUIT = ("Ctrl+Q", "quit: every agent stops (asks while a turn runs or a question waits)")
"""What Ctrl+Q does attached to the service, and with the agents in Cockpit (`--local`)."""


def help_keys(detaches: bool) -> tuple[tuple[str, str], ...]:
    """Every key, Ctrl+Q as it acts in this Cockpit."""
    return (*KEYS, DETACH if detaches else QUIT)


RAIL_LEGEND = "\n".join(
    (
        "Rail:  ! needs you   ✗ error   ◆ finished, unread   ● working",
        "◌ starting   ○ idle   · closed   ► the session on screen",
    )
)
"""The rail's glyphs, on two lines that fit an 80-column terminal (and wrap if narrower)."""


class HelpScreen(Dialog[None]):
    """Every key, in one place."""

    DEFAULT_CSS = """
    HelpScreen #dialog.help {
        width: 80;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("f1,q", "dismiss(None)", "Close", show=False),
    ]

    def __init__(self, detaches: bool = True) -> None:
        super().__init__()
        self.detaches = detaches
        """Whether Ctrl+Q detaches (attached to the service) or quits (`--local`)."""

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, what in help_keys(self.detaches):
            table.add_row(key, what)
        with VerticalScroll(id="dialog", classes="help"):
            yield Label("Cockpit keys", classes="dialog-title")
            yield Static(table)
            yield Static(Content(RAIL_LEGEND), classes="hint")
            yield Label("Esc closes this help", classes="hint")
