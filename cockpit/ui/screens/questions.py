"""Dialogs that ask one thing: a session's title (rename), yes or no (confirm), one of the
agent's modes and options."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.ui.agent_options import OptionChoice
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.keys_in_order import Field
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


class RenameScreen(Dialog[str | None]):
    """Give a session a title."""

    BINDINGS: ClassVar[list[BindingType]] = [escape("Cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.current = title

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Rename session", classes="dialog-title")
            yield Field(self.current, id="title")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ConfirmScreen(Dialog[bool]):
    """A yes/no question (deleting a session, quitting, replacing a file): `y` or the first
    button says yes; `n`, Esc or the second says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "dismiss(True)", "Yes"),
        Binding("n", "dismiss(False)", "No"),
        escape("No", "False"),
    ]

    def __init__(
        self, question: str, yes: str = "Delete", no: str = "Keep", details: Sequence[str] = ()
    ) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no
        self.details = tuple(details)
        """Lines under the question: what saying yes does (the files a restore changes)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(clean_line(self.question)), classes="question")
            if self.details:
                lines = "\n".join(clean_line(line) for line in self.details)
                yield Static(Text(lines), classes="details")
            with Horizontal(classes="buttons"):
                yield Button(Content(f"{self.yes} (y)"), variant="error", id="yes")
                yield Button(Content(f"{self.no} (n)"), id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # Enter keeps things as they are

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class OptionsScreen(Dialog[OptionChoice | None]):
    """Every mode and config option the agent offers (model, thinking level...); Enter sets
    the highlighted value."""

    BINDINGS: ClassVar[list[BindingType]] = [escape("Close")]

    def __init__(self, choices: list[OptionChoice], title: str = "Agent options") -> None:
        super().__init__()
        self.choices = choices
        self.title_text = title
        """What the dialog is headed: every option, or one of them (`/model`)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, classes="dialog-title")
            options = []
            for choice in self.choices:
                text = Text(("● " if choice.current else "  ") + clean_line(choice.label))
                if choice.current:
                    text.stylize("bold")
                options.append(Option(text))
            if not options:
                options.append(
                    Option(
                        Text("This agent offers no modes or options.", style="dim"), disabled=True
                    )
                )
            yield Listing(*options, id="choices")
            yield Label("Enter sets · Esc closes", classes="hint")

    def on_mount(self) -> None:
        choices = self.query_one("#choices", OptionList)
        current = next((i for i, c in enumerate(self.choices) if c.current), 0)
        choices.highlighted = current if self.choices else None
        choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.choices):
            self.dismiss(self.choices[event.option_index])
