"""A worktree session's checkpoints, one line each, to pick the one to put the files back to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from cockpit.api import Checkpoint
from cockpit.text.checkpoints import checkpoint_changes, checkpoint_when
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


def checkpoint_line(checkpoint: Checkpoint) -> str:
    """One checkpoint as the list shows it: its number, when it was made, what changed."""
    return f"#{checkpoint.id:<4} {checkpoint_when(checkpoint):<20} {checkpoint_changes(checkpoint)}"


class CheckpointsScreen(Dialog[str | None]):
    """The checkpoints of a session, oldest first and the newest highlighted; Enter picks
    one to restore (what that does is shown and asked next), Esc closes."""

    BINDINGS: ClassVar[list[BindingType]] = [escape("Close")]

    def __init__(self, title: str, checkpoints: Sequence[Checkpoint]) -> None:
        super().__init__()
        self.heading = title
        self.checkpoints = tuple(checkpoints)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(
                Content(f"Checkpoints — {clean_line(self.heading)}"), classes="dialog-title"
            )
            yield Listing(
                *(Option(Text(checkpoint_line(c))) for c in self.checkpoints),
                id="checkpoints",
            )
            yield Label("Enter restores the files to one (asks first) · Esc closes", classes="hint")

    def on_mount(self) -> None:
        listing = self.query_one("#checkpoints", OptionList)
        listing.highlighted = len(self.checkpoints) - 1 if self.checkpoints else None
        listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.checkpoints):
            self.dismiss(self.checkpoints[event.option_index].id)
