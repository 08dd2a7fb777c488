"""Dialogs: a new session (agent and folder), rename, delete, a permission request, and
the help screen."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.events import PermissionRequest
from cockpit.registry import AgentSpec
from cockpit.sanitize import printable


@dataclass(frozen=True)
class NewSessionChoice:
    """What the new-session dialog returns."""

    agent: str
    folder: str


class NewSessionScreen(ModalScreen[NewSessionChoice | None]):
    """Pick an agent (installed ones first) and a folder."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(
        self, agents: list[AgentSpec], available: dict[str, bool], folder: str, default: str
    ) -> None:
        super().__init__()
        self.agents = sorted(
            agents,
            key=lambda spec: (not available.get(spec.name, False), spec.name != default, spec.name),
        )
        self.available = available
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("New session", classes="dialog-title")
            yield Label("Agent")
            options = []
            for spec in self.agents:
                ready = self.available.get(spec.name, False)
                word = spec.name if ready else "not installed"
                prompt = Text(f"{spec.label}  {word}")
                prompt.stylize("dim", 0 if not ready else len(spec.label))
                options.append(Option(prompt, id=spec.name, disabled=not ready))
            yield OptionList(*options, id="agents")
            yield Static("", id="agent-hint", classes="hint")
            yield Label("Folder")
            yield Input(self.folder, id="folder")
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="create")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        agents = self.query_one("#agents", OptionList)
        agents.highlighted = 0
        agents.focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        spec = next((a for a in self.agents if a.name == event.option.id), None)
        if spec is not None:
            ready = self.available.get(spec.name, False)
            hint = (spec.description or spec.name) if ready else f"install: {spec.install}"
            self.query_one("#agent-hint", Static).update(Text(printable(hint)))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#folder", Input).focus()

    def on_input_submitted(self) -> None:
        self._create()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self._create()
        else:
            self.dismiss(None)

    def _create(self) -> None:
        agents = self.query_one("#agents", OptionList)
        if agents.highlighted is None:
            self.notify("Choose an agent", severity="warning")
            return
        option = agents.get_option_at_index(agents.highlighted)
        folder = self.query_one("#folder", Input).value.strip() or self.folder
        if not Path(folder).expanduser().is_dir():
            self.notify(f"{folder} is not a folder", severity="error")
            return
        assert option.id is not None
        self.dismiss(NewSessionChoice(option.id, str(Path(folder).expanduser())))


class RenameScreen(ModalScreen[str | None]):
    """Give a session a title."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.current = title

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Rename session", classes="dialog-title")
            yield Input(self.current, id="title")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question (deleting a session)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "dismiss(True)", "Yes"),
        Binding("n,escape", "dismiss(False)", "No"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question)
            with Horizontal(classes="buttons"):
                yield Button("Delete (y)", variant="error", id="yes")
                yield Button("Keep (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class PermissionScreen(ModalScreen[str | None]):
    """The agent asks before it acts: its own options, bound to the keys 1-9."""

    def __init__(self, request: PermissionRequest, session_title: str) -> None:
        super().__init__()
        self.request = request
        self.session_title = session_title

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"{printable(self.session_title)} asks permission", classes="dialog-title")
            yield Static(
                Text(f"[{self.request.kind}] {printable(self.request.title)}", style="bold")
            )
            for diff in self.request.diffs():
                old = diff.get("oldText")
                change = "a new file" if old is None else "changes"
                yield Static(Text(f"  {change}: {printable(str(diff.get('path')))}", style="dim"))
            for number, option in enumerate(self.request.options[:9], start=1):
                yield Button(
                    f"{number}. {printable(str(option.get('name')))}", id=f"option-{number}"
                )
            yield Label("Esc cancels the request", classes="hint")

    def on_key(self, event: object) -> None:
        key = getattr(event, "key", "")
        if key.isdigit() and 1 <= int(key) <= min(9, len(self.request.options)):
            self.dismiss(str(self.request.options[int(key) - 1]["optionId"]))
        elif key == "escape":
            self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        number = int(str(event.button.id).split("-")[1])
        self.dismiss(str(self.request.options[number - 1]["optionId"]))


KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt"),
    ("Ctrl+J, Shift+Enter", "new line in the prompt (Ctrl+J works over any SSH)"),
    ("Up / Down", "earlier prompts (from the first / last line)"),
    ("Esc", "cancel the running turn"),
    ("Ctrl+N", "new session"),
    ("Ctrl+Up / Ctrl+Down", "previous / next session"),
    ("F2", "rename the session"),
    ("F4", "close the session: its agent stops, the transcript stays"),
    ("F8", "delete the session"),
    ("Ctrl+B", "show or hide the session rail"),
    ("Ctrl+End", "jump to the newest output"),
    ("F3", "copy the newest reply, or the focused bubble"),
    ("Tab, Shift+Tab", "move between the rail, the transcript and the prompt"),
    ("c  on a bubble", "copy it to the clipboard (works over SSH)"),
    ("Enter  on a thought", "expand or fold it"),
    ("Ctrl+P", "command palette: sessions, agents, themes, actions"),
    ("F1", "this help"),
    ("Ctrl+Q", "quit"),
)
"""Every key, as the help screen lists it."""

RAIL_LEGEND = (
    "Rail:  ! needs you   ✗ error   ◆ finished, unread   ● working   ◌ starting   ○ idle   · closed"
)


class HelpScreen(ModalScreen[None]):
    """Every key, in one place."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "dismiss(None)", "Close")]

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=False, padding=(0, 2, 0, 0))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for key, what in KEYS:
            table.add_row(key, what)
        with VerticalScroll(id="dialog", classes="help"):
            yield Label("Cockpit keys", classes="dialog-title")
            yield Static(table)
            yield Label(RAIL_LEGEND, classes="hint")
            yield Label("Esc closes this help", classes="hint")
