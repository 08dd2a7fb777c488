"""The inbox: everything that waits on the user, across all sessions (permission requests,
forms, finished turns not read), answered or opened from one list. A form is filled in
right there, under the list, as it would be in its session."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.api import PermissionRequest
from cockpit.text.sanitize import printable
from cockpit.text.textout import age
from cockpit.ui.dialog import Dialog, closed_already
from cockpit.ui.diffs.model import diff_stats
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.keys_in_order import passed_on, ran_own_binding
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line
from cockpit.ui.permission_prompt import PermissionPrompt

AnswerForm = Callable[[PermissionRequest, str, "dict[str, Any] | None"], Awaitable[str | None]]
"""Answers a form: the request, "accept", "decline" or "cancel", and the values; it
returns why the values were refused, or None once the form is answered."""


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

    @property
    def is_form(self) -> bool:
        """A form (or a link) the agent asks: filled in the inbox itself."""
        return self.request is not None and self.request.form is not None


class InboxList(Listing):
    """The inbox's rows, running their keys and the inbox's as each comes, in the order
    typed. Enter or Tab on a form's row moves the keyboard into the form, so the keys
    typed after it in the same burst fill its first field, and an Esc among them cancels
    the form rather than closing the inbox."""

    async def on_key(self, event: events.Key) -> None:
        if passed_on(self, event):
            return
        screen = self.screen
        inbox = screen if isinstance(screen, InboxScreen) else None
        if event.key in ("enter", "tab") and inbox is not None and await inbox.enter_form():
            event.stop()
            event.prevent_default()
            return
        await ran_own_binding(self, event, text=False, screen=True)


class InboxScreen(Dialog[str | None]):
    """Everything that waits on the user, across all sessions, oldest first. Keys 1-9
    answer the highlighted request in place; Enter opens its session, or goes into the
    highlighted form; `o` opens the session of any row."""

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
    InboxScreen #inbox-form {
        height: auto;
        max-height: 35vh; /* at 80x24 the form scrolls to the field being filled */
        display: none;
    }
    InboxScreen .with-form #inbox-items {
        max-height: 5;
    }
    InboxScreen .with-form #inbox-detail {
        display: none; /* the form says what it asks */
    }
    InboxScreen #inbox-form FormPrompt {
        margin: 0;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Not a priority binding, unlike other dialogs' Esc: the list runs it in the order
        # typed, behind an Enter that went into a form (where Esc cancels the form).
        Binding("escape", "close(None)", "Close"),
        Binding("o", "open", "Open its session", show=False),
        *(Binding(key, f"answer({n})", show=False) for n, key in enumerate("123456789", 1)),
    ]

    def __init__(
        self,
        items: Callable[[], list[InboxItem]],
        answer: Callable[[PermissionRequest, str], Awaitable[None]],
        answer_form: AnswerForm,
        now: Callable[[], float],
    ) -> None:
        super().__init__()
        self._items = items
        self._answer = answer
        self._answer_form = answer_form
        self._now = now
        self.items: list[InboxItem] = []
        self._forms: dict[str, FormPrompt] = {}
        """The forms shown so far, by request: what was typed in one stays while the
        highlight is elsewhere."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="inbox"):
            yield Label("Waiting for you", classes="dialog-title")
            yield InboxList(id="inbox-items")
            yield Static("", id="inbox-detail")
            yield VerticalScroll(id="inbox-form", can_focus=False)
            yield Label(
                "1-9 answer · Enter opens, or goes into a form · o opens · Esc closes",
                classes="hint",
            )

    def on_mount(self) -> None:
        self.refresh_items()
        self.query_one("#inbox-items", OptionList).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Inside a form its own keys come first: Esc cancels the form (as in its
        session), and a digit or `o` in one of its lists is no answer to the list."""
        if self._in_form() and action in ("close", "open", "answer"):
            return False
        return super().check_action(action, parameters)

    def _in_form(self) -> bool:
        focused = self.focused
        return focused is not None and any(
            isinstance(node, FormPrompt) for node in focused.ancestors_with_self
        )

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
        self._drop_gone_forms()
        if not self.items:
            listing.add_option(Option(Text("Nothing waits for you.", style="dim"), disabled=True))
            self.query_one("#inbox-detail", Static).update("")
            return
        # Each row carries its item's key: a highlight or a selection on its way to this
        # screen names its row, whatever the list did meanwhile.
        listing.add_options([Option(self._line(item), id=item.key) for item in self.items])
        listing.highlighted = kept_highlight(before, index, keys)

    def _drop_gone_forms(self) -> None:
        """Forms answered meanwhile (here, in their session, or by another client) go; the
        keyboard that was in one goes back to the list."""
        waiting = {item.request.id for item in self.items if item.request is not None}
        for request_id in [key for key in self._forms if key not in waiting]:
            prompt = self._forms.pop(request_id)
            if self.focused is not None and prompt in self.focused.ancestors:
                self.set_focus(self.query_one("#inbox-items", OptionList))
            prompt.remove()
        if not any(prompt.display for prompt in self._forms.values()):
            self.query_one("#inbox-form").display = False
            self.query_one("#dialog").remove_class("with-form")

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

    async def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        item = self._item(event.option.id)
        if item is not None and event.option.id == self._highlighted_key():
            self.query_one("#inbox-detail", Static).update(preview(item))
            await self._show_form(item)

    async def _show_form(self, item: InboxItem | None) -> FormPrompt | None:
        """Show the form of `item` under the list (made once, kept while it waits), and
        hide any other; None when `item` is no form."""
        holder = self.query_one("#inbox-form", VerticalScroll)
        request = item.request if item is not None and item.is_form else None
        for request_id, shown in self._forms.items():
            shown.display = request is not None and request_id == request.id
        holder.display = request is not None
        self.query_one("#dialog").set_class(request is not None, "with-form")
        if request is None:
            return None
        prompt = self._forms.get(request.id)
        if prompt is None:
            prompt = self._forms[request.id] = FormPrompt(request)
            await holder.mount(prompt)
        return prompt

    async def enter_form(self) -> bool:
        """Move the keyboard into the highlighted row's form, now (True), when it is one."""
        item = self._item(self._highlighted_key())
        if item is None or not item.is_form or closed_already(self):
            return False
        prompt = await self._show_form(item)
        parts = [] if prompt is None else prompt.parts()
        if not parts:
            return False
        self.set_focus(parts[0])
        return True

    async def on_form_prompt_answered(self, message: FormPrompt.Answered) -> None:
        """A form filled here was answered: tell the engine, then list what still waits.
        Values the engine refuses are said in the form, which can be sent again."""
        message.stop()
        listing = self.query_one("#inbox-items", OptionList)
        self.set_focus(listing)  # the keys typed after the answer go to the list
        problem = await self._answer_form(message.request, message.action, message.content)
        if closed_already(self):
            return
        prompt = self._forms.get(message.request.id)
        if problem is not None and prompt is not None:
            prompt.show_problem(problem)
            parts = prompt.parts()
            if parts and self.focused is listing:
                self.set_focus(parts[0])
            return
        self.refresh_items()

    def on_permission_prompt_key_after_answer(
        self, message: PermissionPrompt.KeyAfterAnswer
    ) -> None:
        """A key typed after a form here was answered belongs to the list."""
        message.stop()
        self.app.post_message(events.Key(message.key, message.character))

    def _highlighted_key(self) -> str | None:
        option = self.query_one("#inbox-items", OptionList).highlighted_option
        return None if option is None else option.id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        item = self._item(event.option.id)
        if item is not None and not item.is_form:  # a row that went meanwhile opens nothing
            self.dismiss(item.session)

    def action_open(self) -> None:
        """Open the highlighted row's session (a form's too, to read what led to it)."""
        item = self._item(self._highlighted_key())
        if item is not None:
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
        text.append(" asks you to open a link:" if form.is_link else " asks you to fill this in:")
        text.append("\nEnter or Tab goes into it · Esc in it cancels it", style="dim")
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
