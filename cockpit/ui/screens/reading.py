"""Screens read at one's pace, closed with Esc: a session's plan, and lasting information
(the permission rules in force) that a toast would take away too soon."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Label, Static

from cockpit.text.sanitize import printable
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.one_line import clean_line


class PlanScreen(Dialog[None]):
    """A session's latest plan, as a checklist."""

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("p,q", "dismiss(None)", "Close", show=False),
    ]

    def __init__(self, title: str, lines: list[str]) -> None:
        super().__init__()
        self.plan_title = title
        self.lines = lines

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(f"Plan — {clean_line(self.plan_title)}"), classes="dialog-title")
            body = (
                "\n".join(printable(line) for line in self.lines) or "This session has no plan yet."
            )
            yield Static(Text(body))
            yield Label("Esc closes", classes="hint")


class TextScreen(Dialog[None]):
    """Lasting information the user reads at their pace (the permission rules in force):
    not a toast that vanishes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("q", "dismiss(None)", "Close", show=False),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.heading = title
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label(Content(clean_line(self.heading)), classes="dialog-title")
            yield Static(Text(printable(self.text)))
            yield Label("Esc closes", classes="hint")
