"""The inbox: everything that waits on the user, across all sessions (permission requests,
finished turns not read), answered or opened from one list."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.api import PermissionRequest
from cockpit.text.sanitize import printable
from cockpit.text.textout import age
from cockpit.ui.dialog import Dialog, closed_already, escape
from cockpit.ui.diffs.model import diff_stats
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


@dataclass(frozen=True)
class InboxItem:
    """One thing waiting for the user: a permission request, or a finished turn not read."""

    session: str
    session_title: str
    since: float
    request: PermissionRequest | None = None

    @property
    def key(self) -> str:
        """What stays the same about the item while the inbox refreshes."""
        if self.request is not None:
            return f"request:{self.request.id}"
        return f"unread:{self.session}"


class InboxScreen(Dialog[str | None]):
    """Everything that waits on the user, across all sessions, oldest first. Keys 1-9
    answer the highlighted request in place; Enter opens its session."""

    DEFAULT_CSS = """
    InboxScreen #dialog.inbox {
        width: 90;
    }
    InboxScreen #inbox-items {
        height: auto;
        max-height: 10; /* with the detail and the hint, the inbox fits 80x24 */
    }
    InboxScreen #inbox-detail {
        height: auto;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        *(Binding(key, f"answer({n})", show=False) for n, key in enumerate("123456789", 1)),
    ]

    def __init__(
        self,
        items: Callable[[], list[InboxItem]],
        answer: Callable[[PermissionRequest, str], Awaitable[None]],
        now: Callable[[], float],
    ) -> None:
        super().__init__()
        self._items = items
        self._answer = answer
        self._now = now
        self.items: list[InboxItem] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="inbox"):
            yield Label("Waiting for you", classes="dialog-title")
            yield Listing(id="inbox-items")
            yield Static("", id="inbox-detail")
            yield Label(
                "1-9 answer the highlighted question · Enter opens its session · Esc closes",
                classes="hint",
            )

    def on_mount(self) -> None:
        self.refresh_items()
        self.query_one("#inbox-items", OptionList).focus()

    def refresh_items(self) -> None:
        """Read what waits now: answers remove items, new requests and finished turns add
        some (the app calls this on every engine event while the inbox is open). The
        highlight stays on its item, or moves to the next one when its item went."""
        listing = self.query_one("#inbox-items", OptionList)
        before = [item.key for item in self.items]
        index = listing.highlighted
        self.items = self._items()
        keys = [item.key for item in self.items]
        listing.clear_options()
        if not self.items:
            listing.add_option(Option(Text("Nothing waits for you.", style="dim"), disabled=True))
            self.query_one("#inbox-detail", Static).update("")
            return
        # Each row carries its item's key: a highlight or a selection on its way to this
        # screen names its row, whatever the list did meanwhile.
        listing.add_options([Option(self._line(item), id=item.key) for item in self.items])
        listing.highlighted = kept_highlight(before, index, keys)

    def _item(self, key: str | None) -> InboxItem | None:
        """The item listed under `key`; None once it went."""
        return next((item for item in self.items if item.key == key), None)

    def _line(self, item: InboxItem) -> Text:
        text = Text()
        if item.request is not None:
            text.append("! ", style="bold")
            text.append(clean_line(item.session_title), style="bold")
            text.append(f"  {clean_line(item.request.title)} [{clean_line(item.request.kind)}]")
        else:
            text.append("◆ ", style="bold")
            text.append(clean_line(item.session_title), style="bold")
            text.append("  finished a turn", style="dim")
        text.append(f"  · {age(self._now() - item.since)}", style="dim")
        return text

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        item = self._item(event.option.id)
        if item is not None and event.option.id == self._highlighted_key():
            self.query_one("#inbox-detail", Static).update(preview(item))

    def _highlighted_key(self) -> str | None:
        option = self.query_one("#inbox-items", OptionList).highlighted_option
        return None if option is None else option.id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        item = self._item(event.option.id)
        if item is not None:  # a row that went meanwhile opens nothing
            self.dismiss(item.session)

    async def action_answer(self, number: int) -> None:
        """Answer the highlighted request with option `number`."""
        item = self._item(self._highlighted_key())
        request = None if item is None else item.request
        if request is None or not 1 <= number <= len(request.choices):
            return
        await self._answer(request, request.choices[number - 1].option_id)
        if not closed_already(self):  # Esc in the same burst may have closed the inbox
            self.refresh_items()


def preview(item: InboxItem) -> Text:
    """What the highlighted row is about, for the lines under the list: whose question it
    is, what it would do, and what each key answers (a row has no room for them at 80
    columns); for a finished turn, that Enter reads it."""
    text = Text()
    title = printable(clean_line(item.session_title))
    request = item.request
    if request is None:
        text.append(title, style="bold")
        text.append(" finished a turn: Enter opens it.")
        return text
    text.append(title, style="bold")
    form = request.form
    if form is not None:
        text.append(f" asks: {printable(clean_line(form.message))}")
        if form.is_link:
            text.append(f"\nto open {printable(form.url)}", style="bold")
        else:
            names = ", ".join(printable(clean_line(field.label)) for field in form.fields)
            text.append(f"\n{names}" if names else "\nno fields", style="bold")
        text.append("\nEnter opens it to answer.", style="dim")
        return text
    text.append(f" asks: {printable(clean_line(request.title))}")
    command = request.call.command
    if command:
        text.append(f"\n$ {printable(command)}", style="bold")
    for diff in request.call.diffs:
        added, removed = diff_stats(diff.old_text, diff.new_text)
        text.append(f"\n{printable(str(diff.path))}  +{added} -{removed}")
    keys = Text()
    for number, option in enumerate(request.choices[:9], 1):
        if number > 1:
            keys.append("  ")
        keys.append(f" {number} ", style="reverse bold")
        keys.append(f" {printable(str(option.name))}")
    text.append("\n")
    text.append_text(
        keys if request.choices else Text("No answer offered: open the session.", "dim")
    )
    return text


def kept_highlight(before: list[str], index: int | None, after: list[str]) -> int:
    """Where the highlight goes when a list of keys changes: on the item it was on, else on
    the next item of the old list that is still there, else on the last one."""
    if index is None or not 0 <= index < len(before):
        return 0
    places = {key: place for place, key in reversed(list(enumerate(after)))}  # the first
    for key in before[index:]:
        if key in places:
            return places[key]
    return len(after) - 1
