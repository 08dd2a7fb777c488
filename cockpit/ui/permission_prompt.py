"""A permission request, inline in its session: what the agent wants to do, what it would
change (folded so that what it would write shows first; `f` shows it whole), and the
agent's own options bound to the keys 1-9."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Static
from textual.widgets.button import ButtonVariant

from cockpit.api import PermissionOption, PermissionRequest, Unknown
from cockpit.text.sanitize import printable
from cockpit.ui.cards import session_root, short_path
from cockpit.ui.diffs.model import diff_lines
from cockpit.ui.diffs.palette import diff_styles
from cockpit.ui.diffs.render import render_diff
from cockpit.ui.keys_in_order import ran_own_binding

KEYS = "123456789"


def option_label(number: int, option: PermissionOption | Unknown) -> Content:
    """A button's label: its key and the agent's own name for the option, shown as
    written (never read as markup)."""
    name = option.name if isinstance(option, PermissionOption) else None
    return Content(f"{number} {printable(name or 'option')}")


def variant_of(kind: str) -> ButtonVariant:
    """Allow options look like going ahead, reject options like stopping."""
    if kind.startswith("allow"):
        return "success"
    if kind.startswith("reject"):
        return "error"
    return "default"


def request_summary(request: PermissionRequest) -> Text:
    """What is asked: the title, its kind and, for a command, the command line."""
    text = Text("⚑ ", style="bold")
    text.append(f"The agent asks to: {printable(request.title)}", style="bold")
    text.append(f"  [{request.kind}]", style="dim")
    command = request.call.command
    if command and command not in request.title:
        text.append(f"\n  $ {printable(command)}")
    return text


def folds(request: PermissionRequest, limit: int) -> bool:
    """True when one of the request's diffs is too long to show whole in `limit` lines."""
    return any(
        len(diff_lines(diff.old_text, diff.new_text)) > limit + 1 for diff in request.call.diffs
    )


def hint_text(request: PermissionRequest, unfolded: bool = False, waiting: int = 1) -> Text:
    """The keys of the prompt; `f` only when there is a diff to unfold (or fold again);
    first, how many more requests of the session wait behind this one (`waiting` counts
    them all, this one included): they come one at a time, as each is answered."""
    text = Text()
    if waiting > 1:
        more = waiting - 1
        text.append(f"{more:,} more {'wait' if more > 1 else 'waits'} after this one", "bold")
        text.append(" (Ctrl+O lists them) · ", "dim")
    parts = ["1-9 to answer"]
    if folds(request, DIFF_LINES):
        parts.append("f fold the diff" if unfolded else "f whole diff")
    parts.append("Esc to the prompt")
    text.append(" · ".join(parts), "dim")
    return text


class RequestDiff(Widget):
    """The change a request would make, as the tool card would show it: folded to
    DIFF_LINES, or whole."""

    DEFAULT_CSS = "RequestDiff { height: auto; }"

    unfolded: reactive[bool] = reactive(False, layout=True)

    def __init__(self, request: PermissionRequest) -> None:
        super().__init__()
        self.request = request

    def render(self) -> RenderableType:
        styles = diff_styles(self)
        width = max(self.content_size.width, 20)
        root = session_root(self.app, self.request.session)
        return Group(
            *(
                render_diff(
                    short_path(diff.path or "", root),
                    diff.old_text,
                    diff.new_text,
                    width=width,
                    folded=not self.unfolded,
                    limit=DIFF_LINES,
                    styles=styles,
                )
                for diff in self.request.call.diffs
            )
        )


DIFF_LINES = 8
"""Lines of a diff the prompt shows before folding the rest (`f` shows them all)."""


class PermissionPrompt(Widget):
    """One pending request in the transcript, answered with a key or a click."""

    # The hint is drawn dim already: muted on top of that it would not read.
    DEFAULT_CSS = """
    PermissionPrompt {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $status-needs-you;
        background: $boost;
    }
    PermissionPrompt:focus {
        background: $surface;
    }
    PermissionPrompt .options {
        height: auto;
        margin-top: 1;
    }
    PermissionPrompt Button {
        margin-right: 2;
    }
    PermissionPrompt .hint {
        color: $foreground;
    }
    """

    can_focus = True
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(key, f"choose({number})", show=False) for number, key in enumerate(KEYS, 1)),
        Binding("f", "unfold", "Whole diff", show=False),
        Binding("escape", "leave", "Back to the prompt", show=False),
    ]

    class Answered(Message):
        """The user picked one of the agent's options (None cancels the request)."""

        def __init__(self, request: PermissionRequest, option_id: str | None) -> None:
            super().__init__()
            self.request = request
            self.option_id = option_id

    class KeyAfterAnswer(Message):
        """A key that reached the question after it was answered (typed in one burst with
        the answer): it belongs where the keyboard goes next."""

        def __init__(self, key: str, character: str | None) -> None:
            super().__init__()
            self.key = key
            self.character = character

    def __init__(self, request: PermissionRequest, waiting: int = 1) -> None:
        super().__init__(classes="permission-prompt")
        self.request = request
        self.waiting = waiting
        """How many requests of the session wait, this one included."""
        self.unfolded = False
        self.answered = False

    async def on_key(self, event: events.Key) -> None:
        if self.answered:
            event.stop()
            event.prevent_default()
            self.post_message(self.KeyAfterAnswer(event.key, event.character))
            return
        await ran_own_binding(self, event, text=False)  # a digit answers, before the next key

    def compose(self) -> ComposeResult:
        yield Static(request_summary(self.request), classes="summary")
        if self.request.call.diffs:
            yield RequestDiff(self.request)
        with Horizontal(classes="options"):
            for number, option in enumerate(self.request.choices[: len(KEYS)], 1):
                yield Button(
                    option_label(number, option),
                    id=f"option-{number}",
                    variant=variant_of(option.kind),
                    compact=True,
                )
        yield Static(hint_text(self.request, waiting=self.waiting), classes="hint")

    def show_waiting(self, waiting: int) -> None:
        """More requests came, or some behind this one were answered elsewhere."""
        if waiting != self.waiting:
            self.waiting = waiting
            self._update_hint()

    def _update_hint(self) -> None:
        if self.is_mounted:
            hint = hint_text(self.request, self.unfolded, self.waiting)
            self.query_one(".hint", Static).update(hint)

    def action_choose(self, number: int) -> None:
        """Answer with the agent's option `number` (1-based)."""
        if 1 <= number <= len(self.request.choices) and not self.answered:
            option_id = self.request.choices[number - 1].option_id
            self.answered = True
            self.post_message(self.Answered(self.request, option_id))

    def action_unfold(self) -> None:
        """Show the whole diff, or fold it again."""
        for diff in self.query(RequestDiff):
            diff.unfolded = not diff.unfolded
            self.unfolded = diff.unfolded
            self._update_hint()

    def action_leave(self) -> None:
        """Back to the composer without answering."""
        self.app.query_one("#composer").focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose(int(str(event.button.id).split("-")[1]))
