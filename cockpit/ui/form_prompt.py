"""A form the agent asks the user to fill (or a link it asks them to open), inline in its
session like a permission question: one field per row, answered from the keyboard alone.

Tab and Shift+Tab move between the fields (and the buttons), round the form; Space ticks
a box or a choice; Enter sends the form (on Decline, declines it); Esc cancels it. A
field whose name says it holds a secret is masked as it is typed. A link is shown, never
opened: `c` copies it, Enter says it was opened. Keys typed in one burst keep their order
and their field: each part runs its own keys as they come, and a key that reached a part
after Tab moved on goes where the keyboard is.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static

from cockpit.api import Form, FormField, PermissionRequest
from cockpit.form_rules import FormValueError, validate
from cockpit.text.sanitize import printable
from cockpit.ui.keys_in_order import passed_on, ran_own_binding
from cockpit.ui.permission_prompt import PermissionPrompt

LABEL_WIDTH = 16
"""Columns of a field's name, before the field."""


def field_help(field: FormField) -> str:
    """What a field takes, in words, for the line under the form."""
    parts: list[str] = []
    if field.description:
        parts.append(field.description)
    if field.kind in ("number", "integer"):
        low, high = field.minimum, field.maximum
        what = "a whole number" if field.kind == "integer" else "a number"
        if low is not None and high is not None:
            what += f" from {_plain(low)} to {_plain(high)}"
        elif low is not None:
            what += f", at least {_plain(low)}"
        elif high is not None:
            what += f", at most {_plain(high)}"
        parts.append(what)
    elif field.kind == "string" and field.max_length is not None:
        parts.append(f"at most {field.max_length:,} characters")
    elif field.kind == "choice":
        parts.append("↑↓ and Space to choose one")
    elif field.kind == "choices":
        parts.append("↑↓ and Space to tick any")
    elif field.kind == "boolean":
        parts.append("Space ticks yes")
    if field.required:
        parts.append("required")
    return " · ".join(parts)


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def form_summary(form: Form) -> Text:
    """What is asked: the agent's message, and the link for a link."""
    text = Text("? ", style="bold")
    text.append(printable(form.title or "The agent asks"), style="bold")
    text.append(f": {printable(form.message)}")
    if form.is_link:
        text.append("\n  ")
        text.append(printable(form.url), style="underline")
    return text


def form_hint(form: Form) -> Text:
    """The keys of the form."""
    if form.is_link:
        keys = "Enter: opened it · c copies it · Tab · Esc cancels"
    else:
        keys = "Tab next · Space ticks · Enter sends · Esc cancels"
    return Text(keys, style="dim")


class FormPart:
    """What every part of a form does with a key first: pass on a key that came after the
    keyboard left it, leave the form's own keys to the form, run its own bindings now."""

    async def on_key(self, event: events.Key) -> None:
        widget = self if isinstance(self, Widget) else None
        assert widget is not None
        if passed_on(widget, event):
            return
        prompt = next((n for n in widget.ancestors if isinstance(n, FormPrompt)), None)
        if prompt is not None and await prompt.form_key(event, widget):
            return
        await ran_own_binding(widget, event, text=isinstance(widget, Input))


class TextPart(FormPart, Input):
    """A text or number field."""


class PickPart(FormPart, OptionList):
    """A list to pick from: one of it (a choice), any of it (a multi-select), or a single
    "yes" to tick (a yes/no field). The arrows move, Space picks, and what is picked is
    kept here as Space comes, so an Enter typed right after it sends it. Each option says
    in words whether it is picked ("(•)", "[x]"), not by its colour alone."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("space", "pick", show=False)]

    def __init__(
        self, labels: tuple[str, ...], picked: set[int], *, single: bool, **kwargs: Any
    ) -> None:
        self.labels = labels
        self.picked = set(picked)
        self.single = single
        super().__init__(*(self._prompt(n) for n in range(len(labels))), **kwargs)
        self.highlighted = min(picked) if picked else 0

    def _prompt(self, number: int) -> Text:
        on = number in self.picked
        mark = ("(•) " if on else "( ) ") if self.single else ("[x] " if on else "[ ] ")
        return Text(mark + self.labels[number])

    def action_pick(self) -> None:
        """Pick the highlighted option (a choice: instead of the one before), or unpick it."""
        number = self.highlighted
        if number is None:
            return
        before = set(self.picked)
        if self.single:
            self.picked = {number}
        else:
            self.picked ^= {number}
        for changed in before ^ self.picked:
            self.replace_option_prompt_at_index(changed, self._prompt(changed))


class ButtonPart(FormPart, Button):
    """Send, decline, copy: Enter on it does what it says."""


class FormPrompt(Widget):
    """One pending form in the transcript."""

    DEFAULT_CSS = f"""
    FormPrompt {{
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $status-needs-you;
        background: $boost;
    }}
    FormPrompt:focus-within {{
        background: $surface;
    }}
    FormPrompt .row {{
        height: auto;
    }}
    FormPrompt .label {{
        width: {LABEL_WIDTH};
        height: 1;
    }}
    FormPrompt .part {{
        width: 1fr;
    }}
    FormPrompt OptionList {{
        height: auto;
    }}
    FormPrompt .options {{
        height: auto;
        margin-top: 1;
    }}
    FormPrompt Button {{
        margin-right: 2;
    }}
    FormPrompt .problem {{
        color: $text-error;
        height: auto;
        display: none;
    }}
    FormPrompt .help, FormPrompt .hint {{
        color: $foreground;
        height: auto;
    }}
    """

    can_focus = True

    class Answered(Message):
        """The user answered the form: "accept" with its content, "decline" or "cancel"."""

        def __init__(
            self, request: PermissionRequest, action: str, content: dict[str, Any] | None
        ) -> None:
            super().__init__()
            self.request = request
            self.action = action
            self.content = content

    def __init__(self, request: PermissionRequest, waiting: int = 1) -> None:
        super().__init__(classes="permission-prompt form-prompt")
        assert request.form is not None
        self.request = request
        self.form: Form = request.form
        self.waiting = waiting
        self.answered = False
        self._parts: dict[str, Widget] = {}

    def compose(self) -> ComposeResult:
        yield Static(form_summary(self.form), classes="summary")
        for number, field in enumerate(self.form.fields):
            with Horizontal(classes="row"):
                mark = " *" if field.required else ""
                yield Static(
                    Text(printable(field.label)[: LABEL_WIDTH - 3] + mark), classes="label"
                )
                part = self._part(field, number)
                self._parts[field.name] = part
                yield part
        yield Static("", classes="problem")
        with Horizontal(classes="options"):
            if self.form.is_link:
                yield ButtonPart("Opened it", id="send", variant="success", compact=True)
                yield ButtonPart("Copy link", id="copy", compact=True)
            else:
                yield ButtonPart("Send", id="send", variant="success", compact=True)
            yield ButtonPart("Decline", id="decline", variant="error", compact=True)
        if not self.form.is_link:
            yield Static("", classes="help")
        yield Static(form_hint(self.form), classes="hint")

    def _part(self, field: FormField, number: int) -> Widget:
        """The widget that takes `field`'s value, filled with its default."""
        name = f"field-{number}"
        if field.kind == "boolean":
            picked = {0} if field.default is True else set()
            return PickPart(("yes",), picked, single=False, id=name, classes="part", compact=True)
        if field.kind in ("choice", "choices"):
            default = field.default
            chosen = default if isinstance(default, tuple) else (default,)
            picked = {n for n, value in enumerate(field.values) if value in chosen}
            labels = tuple(printable(label) for label in field.labels)
            single = field.kind == "choice"
            return PickPart(labels, picked, single=single, id=name, classes="part", compact=True)
        default = field.default
        text = "" if default is None or isinstance(default, tuple) else _text(default)
        kinds = {"integer": "integer", "number": "number"}
        return TextPart(
            text,
            password=field.secret,
            type=kinds.get(field.kind, "text"),  # type: ignore[arg-type]
            max_length=field.max_length or 0,
            id=name,
            classes="part",
            compact=True,
        )

    def on_focus(self) -> None:
        """The keyboard given to the form goes to its first field (or its first button)."""
        parts = self.parts()
        if parts:
            self.screen.set_focus(parts[0])

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Say what the field now focused takes."""
        field = next((f for f in self.form.fields if self._parts.get(f.name) is event.widget), None)
        help_text = field_help(field) if field is not None else ""
        for shown in self.query(".help").results(Static):
            shown.update(Text(printable(help_text), style="dim"))

    def parts(self) -> list[Widget]:
        """The form's fields and buttons, in Tab's order."""
        return [*self._parts.values(), *self.query(ButtonPart)]

    def show_waiting(self, waiting: int) -> None:
        """How many questions wait does not change how a form looks."""
        self.waiting = waiting

    async def form_key(self, event: events.Key, part: Widget) -> bool:
        """The form's own keys, whichever part has the keyboard; True when it took it."""
        if self.answered:
            event.stop()
            event.prevent_default()
            self.post_message(PermissionPrompt.KeyAfterAnswer(event.key, event.character))
            return True
        key = event.key
        if key in ("tab", "shift+tab"):
            parts = self.parts()
            step = 1 if key == "tab" else -1
            index = parts.index(part) if part in parts else -step
            self.screen.set_focus(parts[(index + step) % len(parts)])
        elif key == "enter":
            self._enter(part)
        elif key == "escape":
            self.answer("cancel")
        elif key == "c" and self.form.is_link and not isinstance(part, Input):
            self.copy_link()
        else:
            return False
        event.stop()
        event.prevent_default()
        return True

    def _enter(self, part: Widget) -> None:
        if part.id == "decline":
            self.answer("decline")
        elif part.id == "copy":
            self.copy_link()
        else:
            self.send()

    def copy_link(self) -> None:
        """Put the link on the clipboard (the terminal's), never open it."""
        self.app.copy_to_clipboard(self.form.url)
        self.app.notify("The link is on the clipboard.", timeout=3)

    def values(self) -> dict[str, Any]:
        """What the fields hold now, as typed (text is coerced by the form's rules)."""
        values: dict[str, Any] = {}
        for field in self.form.fields:
            part = self._parts[field.name]
            if isinstance(part, PickPart):
                picked = sorted(part.picked)
                if field.kind == "boolean":
                    values[field.name] = bool(picked)
                elif field.kind == "choice":
                    values[field.name] = field.values[picked[0]] if picked else None
                else:
                    values[field.name] = [field.values[n] for n in picked]
            elif isinstance(part, Input):
                values[field.name] = part.value
        return values

    def send(self) -> None:
        """Send the form, once its values fit it; else say which does not."""
        if self.form.is_link:
            self.answer("accept")
            return
        try:
            content = validate(self.form, self.values())
        except FormValueError as problem:
            self.show_problem(str(problem))
            return
        self.answer("accept", content)

    def answer(self, action: str, content: dict[str, Any] | None = None) -> None:
        if not self.answered:
            self.answered = True
            self.post_message(self.Answered(self.request, action, content))

    def show_problem(self, problem: str) -> None:
        """Say why the form was not sent; the user fixes it and sends again."""
        self.answered = False
        shown = self.query_one(".problem", Static)
        shown.update(Text(printable(problem)))
        shown.display = True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._enter(event.button)


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
