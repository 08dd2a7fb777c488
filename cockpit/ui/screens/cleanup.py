"""The cleanup of worktrees: every worktree session's worktree with its size, merged or
what removing it would lose, and its last activity. Space chooses, `d` or Enter removes
the chosen (after a preview that names the unmerged ones), Esc closes."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from cockpit.api import CleanupItem
from cockpit.text.textout import age, size_words
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


def state_words(item: CleanupItem) -> str:
    """Where the worktree is and what removing it loses, in a few words."""
    where = "archived" if item.archived else "missing" if item.missing else size_words(item.size)
    lost = "unmerged: " + ", ".join(item.unmerged) if item.unmerged else "merged"
    return f"{where} · {lost}"


def item_line(item: CleanupItem, chosen: bool, now: float) -> Text:
    """One worktree of the list: chosen or not, its title and branch; under them its last
    activity and its state."""
    text = Text("[x] " if chosen else "[ ] ", style="bold" if chosen else "")
    text.append(clean_line(item.title or item.session), style="bold")
    text.append(f" · {clean_line(item.branch)}", style="dim")
    text.append(f"\n{age(max(0.0, now - item.last_activity))} ago · ", style="dim")
    text.append(clean_line(state_words(item)), style="red" if item.unmerged else "")
    return text


def removal_question(chosen: list[CleanupItem]) -> str:
    """The preview before a removal: how many go, and which lose unmerged work."""
    count = len(chosen)
    asked = f"Remove {count} worktree{'s' if count != 1 else ''} and their branches?"
    unmerged = [item for item in chosen if item.unmerged]
    if unmerged:
        names = ", ".join(f"{item.branch} ({'; '.join(item.unmerged)})" for item in unmerged)
        asked += f" Unmerged work will be lost for good: {names}."
    return asked


class CleanupScreen(Dialog[list[CleanupItem] | None]):
    """Every worktree, to choose those to remove; answers the chosen ones."""

    DEFAULT_CSS = """
    CleanupScreen #dialog.cleanup {
        width: 90;
    }
    CleanupScreen #cleanup-items {
        height: auto;
        max-height: 14;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("space", "choose", "Choose", priority=True),
        Binding("d,enter", "remove", "Remove", priority=True),
    ]

    def __init__(self, items: list[CleanupItem], now: float) -> None:
        super().__init__()
        self.items = items
        self.now = now
        self.chosen: set[str] = set()

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="cleanup"):
            yield Label("Clean up worktrees", classes="dialog-title")
            yield Listing(id="cleanup-items")
            hint = "Space chooses · d or Enter removes the chosen · Esc closes"
            yield Label(hint, classes="hint")

    def on_mount(self) -> None:
        self._show()
        self.query_one("#cleanup-items", OptionList).focus()

    def _show(self) -> None:
        listing = self.query_one("#cleanup-items", OptionList)
        index = listing.highlighted
        listing.clear_options()
        if not self.items:
            listing.add_option(Option(Text("No worktree sessions.", style="dim"), disabled=True))
            return
        listing.add_options(
            [
                Option(item_line(item, item.session in self.chosen, self.now), id=item.session)
                for item in self.items
            ]
        )
        listing.highlighted = index if index is not None else 0

    def action_choose(self) -> None:
        option = self.query_one("#cleanup-items", OptionList).highlighted_option
        if option is None or option.id is None:
            return
        self.chosen ^= {option.id}
        self._show()

    def action_remove(self) -> None:
        chosen = [item for item in self.items if item.session in self.chosen]
        if chosen:
            self.dismiss(chosen)
