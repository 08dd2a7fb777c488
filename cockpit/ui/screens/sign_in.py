"""The sign-in dialog: the agent's ways to sign in, by name and description, and for a way
that needs a key, a masked field for it.

The key typed there goes to the engine for this session only: the field is no draft, no
prompt, and never shown. A way picked with Enter moves the keyboard to its field at once,
so the key typed in the same burst lands there, not in the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, Label, Static
from textual.widgets.option_list import Option

from cockpit.api import SignIn, SignInMethod
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.keys_in_order import Field, passed_on, ran_own_binding
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


@dataclass(frozen=True)
class SignInAnswer:
    """The way the user picked, and the values they typed for its fields."""

    method: SignInMethod
    values: dict[str, str] = field(default_factory=dict, repr=False)


def method_hint(method: SignInMethod) -> str:
    """What picking a way does, in a line."""
    if method.kind == "env_var":
        return f"Gives this session's agent {', '.join(method.variables)}; never stored."
    if method.kind == "key":
        return "Gives this session's agent a key; never stored."
    if method.kind == "terminal":
        return "Runs the agent's own login in this terminal, then signs in."
    return "The agent signs in by itself; an address it shows appears in the session."


class WayList(Listing):
    """The agent's ways: Enter picks one as the key arrives, and keys typed after it
    follow the keyboard to the field it opened."""

    async def on_key(self, event: events.Key) -> None:
        if passed_on(self, event):
            return
        await ran_own_binding(self, event, text=False)

    def action_select(self) -> None:
        screen = self.screen
        if isinstance(screen, SignInScreen) and self.highlighted is not None:
            screen.pick(self.highlighted)


class SignInScreen(Dialog[SignInAnswer | None]):
    """Pick one of the agent's ways to sign in; Esc leaves it signed out."""

    DEFAULT_CSS = """
    SignInScreen .fields { height: auto; display: none; }
    SignInScreen .fields.shown { display: block; }
    SignInScreen .message { color: $text-muted; }
    SignInScreen .way-hint { color: $text-muted; margin-bottom: 1; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [escape("Cancel")]

    def __init__(self, sign_in: SignIn, agent: str) -> None:
        super().__init__()
        self.sign_in = sign_in
        self.agent = agent
        self.picked: int | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(clean_line(f"Sign in to {self.agent}")), classes="dialog-title")
            yield Static(Content(clean_line(self.sign_in.message)), classes="message")
            yield Static("", id="way-hint", classes="way-hint")
            yield WayList(
                *(Option(Content(clean_line(m.label))) for m in self.sign_in.methods),
                id="ways",
            )
            for number, method in enumerate(self.sign_in.methods):
                if method.fields:
                    with Vertical(classes="fields", id=f"fields-{number}"):
                        for name in method.fields:
                            yield Label(Content(clean_line(name)))
                            yield Field(password=True, placeholder="not shown, never stored")

    def on_mount(self) -> None:
        self.query_one("#ways", WayList).focus()
        self._hint(0)

    def on_option_list_option_highlighted(self, event: Listing.OptionHighlighted) -> None:
        self._hint(event.option_index)

    def _hint(self, number: int) -> None:
        if 0 <= number < len(self.sign_in.methods):
            hint = method_hint(self.sign_in.methods[number])
            self.query_one("#way-hint", Static).update(Content(hint))

    def pick(self, number: int) -> None:
        """The user picked way `number`: its fields open (the keyboard moves there now,
        not on the next turn of the loop), or it is the answer when it has none."""
        method = self.sign_in.methods[number]
        if not method.fields:
            self.dismiss(SignInAnswer(method))
            return
        self.picked = number
        for box in self.query(".fields"):
            box.set_class(box.id == f"fields-{number}", "shown")
        first = self.query_one(f"#fields-{number}").query(Field).first()
        self.set_focus(first, scroll_visible=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.picked is None:
            return
        method = self.sign_in.methods[self.picked]
        fields = list(self.query_one(f"#fields-{self.picked}").query(Field))
        values = {name: box.value for name, box in zip(method.fields, fields, strict=True)}
        empty = next((box for box in fields if not box.value), None)
        if empty is not None:
            self.set_focus(empty)
            return
        self.dismiss(SignInAnswer(method, values))
