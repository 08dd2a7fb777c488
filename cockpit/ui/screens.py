"""Dialogs: a new session (agent and folder), rename, delete, a permission request, and
the help screen."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from cockpit.api import AgentInfo, AgentSpec, PermissionRequest
from cockpit.text.sanitize import printable
from cockpit.text.textout import age, command_of
from cockpit.ui.dialog import Dialog, closed_already
from cockpit.ui.diffs import diff_stats
from cockpit.ui.listing import Listing
from cockpit.ui.viewmodel import OptionChoice, clean_line


@dataclass(frozen=True)
class NewSessionChoice:
    """What the new-session dialog returns."""

    agent: str
    folder: str


NEW_SESSION_ROWS = 14
"""The new-session dialog's rows besides its agent list: border, padding, title, the
detail (4 lines), the folder and the buttons, with the gaps between them."""

TITLE_CELLS = 32
"""The widest column of agent titles in the new-session list (a longer title is cut)."""


def agent_order(agents: list[AgentSpec], available: dict[str, bool]) -> list[AgentSpec]:
    """Every agent, the installed ones first, each group in the registry's order."""
    return sorted(agents, key=lambda spec: not available.get(spec.name, False))


def agent_line(spec: AgentSpec, ready: bool, width: int) -> Content:
    """One agent in the dialog's list: its title in a column `width` cells wide, then
    its name, or that it is not installed."""
    title = Content(clean_line(spec.label)).truncate(width, ellipsis=True, pad=True)
    if ready:
        return Content.assemble(title, "  ", (clean_line(spec.name), "dim"))
    return Content.assemble((title.plain, "dim"), "  ", ("not installed", "$text-warning"))


def agent_detail(spec: AgentSpec, ready: bool, refused: bool = False) -> Content:
    """What the dialog says about the highlighted agent: how to install it when it is not
    (first, so that it is never cut), then its description. `refused`: Enter was just
    pressed on it."""
    description = Content(printable(spec.description or " ".join(spec.command)))
    if ready:
        return description
    if refused:
        head = Content.styled(
            "Install it first (F3 copies this), then press Enter again:", "$text-error bold"
        )
    else:
        head = Content.styled("Not installed. To install it (F3 copies this):", "$text-warning")
    how = spec.install or f"{spec.command[0]} was not found."
    return Content("\n").join([head, Content.styled(printable(how), "bold"), description])


def clamped(content: Content, width: int, lines: int) -> Content:
    """`content` wrapped at `width` cells, at most `lines` lines: the last one kept ends
    with an ellipsis when some were cut."""
    wrapped = content.wrap(max(width, 1))
    if len(wrapped) <= lines:
        return Content("\n").join(wrapped)
    kept = wrapped[: max(lines, 1)]
    kept[-1] = kept[-1].truncate(max(width - 1, 0)) + "…"
    return Content("\n").join(kept)


def list_height(screen_rows: int, agents: int) -> int:
    """How many rows the agent list gets: every agent when the screen has room for them
    beside the rest of the dialog, fewer (it scrolls) on a short one, never under 3."""
    return max(3, min(agents, screen_rows - NEW_SESSION_ROWS))


class AgentDetail(Widget):
    """The highlighted agent's detail, cut to the widget's own lines, so the dialog keeps
    its size as the highlight moves."""

    detail: reactive[Content] = reactive(Content(""), layout=False)

    def render(self) -> Content:
        return clamped(self.detail, self.content_size.width, self.content_size.height)


class NewSessionScreen(Dialog[NewSessionChoice | None]):
    """Pick an agent and a folder. Every agent is listed, installed ones first; Enter
    creates the session at once (Tab reaches the folder). One that is not installed says
    how to install it (F3 copies that) and is refused, with the reason in the dialog:
    a session that cannot start would only sit in the rail. It is looked up again on
    each Enter, so installing it meanwhile is enough."""

    AUTO_FOCUS = "#agents"  # at compose time: a key typed right after Ctrl+N lands here
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel"),
        Binding("f3", "copy_install", "Copy the install command"),
    ]

    def __init__(
        self,
        agents: list[AgentInfo],
        folder: str,
        default: str,
        installed: Callable[[str], bool],
    ) -> None:
        super().__init__()
        self.available = {info.spec.name: info.installed for info in agents}
        self.agents = agent_order([info.spec for info in agents], self.available)
        self.installed = installed
        """Whether an agent is installed now, asked of the engine (where agents run)."""
        self.folder = folder
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="new-session"):
            yield Label("New session", classes="dialog-title")
            yield Listing(
                *(Option(self._line(spec), id=spec.name) for spec in self.agents),
                id="agents",
                compact=True,
            )
            yield AgentDetail(id="agent-detail")
            with Horizontal(classes="folder-row"):
                yield Label("Folder", classes="folder-label")
                yield Input(self.folder, id="folder", compact=True)
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="create", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
                yield Label("Enter creates · Tab: folder · Esc cancels", classes="hint")

    def on_mount(self) -> None:
        agents = self.query_one("#agents", OptionList)
        names = [spec.name for spec in self.agents]
        agents.highlighted = names.index(self.default) if self.default in names else 0
        self._fit(self.app.size.height)

    def on_resize(self) -> None:
        self._fit(self.app.size.height)

    def _fit(self, rows: int) -> None:
        self.query_one("#agents", OptionList).styles.max_height = list_height(
            rows, len(self.agents)
        )

    def _ready(self, spec: AgentSpec) -> bool:
        return self.available.get(spec.name, False)

    def _line(self, spec: AgentSpec) -> Content:
        width = max(cell_len(clean_line(agent.label)) for agent in self.agents)
        return agent_line(spec, self._ready(spec), min(width, TITLE_CELLS))

    def _highlighted(self) -> AgentSpec | None:
        index = self.query_one("#agents", OptionList).highlighted
        return self.agents[index] if index is not None and 0 <= index < len(self.agents) else None

    def _show(self, spec: AgentSpec, refused: bool = False) -> None:
        self.query_one(AgentDetail).detail = agent_detail(spec, self._ready(spec), refused)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        spec = self._highlighted()
        if spec is not None:
            self._show(spec)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._create()

    def on_input_submitted(self) -> None:
        self._create()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self._create()
        else:
            self.dismiss(None)

    def action_copy_install(self) -> None:
        """Copy the highlighted agent's install command (OSC 52: it works over SSH)."""
        spec = self._highlighted()
        if spec is None or self._ready(spec) or not spec.install:
            return
        self.app.copy_to_clipboard(spec.install)
        self.notify("Copied the install command", timeout=2)

    def _create(self) -> None:
        spec = self._highlighted()
        if spec is None:
            return
        ready = self.installed(spec.name)  # installed since the dialog opened?
        if ready != self._ready(spec):
            self.available[spec.name] = ready
            self.query_one("#agents", OptionList).replace_option_prompt(spec.name, self._line(spec))
        if not ready:
            self._show(spec, refused=True)
            self.app.bell()
            return
        folder = self.query_one("#folder", Input).value.strip() or self.folder
        if not Path(folder).expanduser().is_dir():
            self.notify(f"{folder} is not a folder", severity="error", markup=False)
            return
        self.dismiss(NewSessionChoice(spec.name, str(Path(folder).expanduser())))


class RenameScreen(Dialog[str | None]):
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


class ConfirmScreen(Dialog[bool]):
    """A yes/no question (deleting a session, quitting, replacing a file): `y` or the first
    button says yes; `n`, Esc or the second says no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "dismiss(True)", "Yes"),
        Binding("n,escape", "dismiss(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Delete", no: str = "Keep") -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(Content(clean_line(self.question)), classes="question")
            with Horizontal(classes="buttons"):
                yield Button(Content(f"{self.yes} (y)"), variant="error", id="yes")
                yield Button(Content(f"{self.no} (n)"), id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()  # Enter keeps things as they are

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


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

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close"),
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
            yield Label("1-9 answer · Enter opens the session · Esc closes", classes="hint")

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
        listing.add_options([Option(self._line(item)) for item in self.items])  # one layout
        listing.highlighted = kept_highlight(before, index, keys)

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
        index = event.option_index
        if not 0 <= index < len(self.items):
            return
        request = self.items[index].request
        detail = Text()
        if request is not None:
            command = command_of(request.tool_call)
            if command:
                detail.append(f"$ {printable(command)}\n", style="bold")
            for diff in request.diffs():
                added, removed = diff_stats(diff.get("oldText"), str(diff.get("newText") or ""))
                detail.append(f"{printable(str(diff.get('path')))}  +{added} -{removed}\n")
            for number, option in enumerate(request.options[:9], 1):
                detail.append(f"{number} {printable(str(option.get('name')))}   ")
        self.query_one("#inbox-detail", Static).update(detail)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.items):
            self.dismiss(self.items[event.option_index].session)

    async def action_answer(self, number: int) -> None:
        """Answer the highlighted request with option `number`."""
        index = self.query_one("#inbox-items", OptionList).highlighted
        if index is None or not 0 <= index < len(self.items):
            return
        request = self.items[index].request
        if request is None or not 1 <= number <= len(request.options):
            return
        await self._answer(request, str(request.options[number - 1].get("optionId")))
        if not closed_already(self):  # Esc in the same burst may have closed the inbox
            self.refresh_items()


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


KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt (or take the highlighted completion)"),
    ("Ctrl+J, Shift+Enter", "new line in the prompt (Ctrl+J works over any SSH)"),
    ("Up / Down", "earlier prompts (from the first / last line)"),
    ("/  @", "complete a command, or a file under the session's folder"),
    ("Esc", "cancel the running turn (and its question); else back to the prompt"),
    ("Ctrl+C", "cancel the running turn; else clear the prompt; again, quit"),
    ("Shift+Tab", "next mode of the agent (in the prompt)"),
    ("Ctrl+T", "the agent's modes and options (model, thinking...)"),
    ("1-9", "answer the agent's question with that option"),
    ("Ctrl+O", "inbox: everything waiting for you, in every session"),
    ("Ctrl+G", "this session's question, else the next session that needs you"),
    ("Ctrl+N", "new session"),
    ("Ctrl+Up / Ctrl+Down", "previous / next session"),
    ("F2", "rename the session"),
    ("F4", "close the session: its agent stops, the transcript stays"),
    ("F8", "delete the session"),
    ("Ctrl+B", "show or hide the session rail"),
    ("p  on the rail", "the session's plan"),
    ("PageUp / PageDown", "scroll the transcript (from a one-line prompt too)"),
    ("Ctrl+Home, Ctrl+End", "the first message / the newest output"),
    ("F3", "copy the newest reply, or the focused bubble"),
    ("Tab", "the prompt, then the transcript, then the rail"),
    ("Up / Down, k / j", "in the transcript: previous / next bubble"),
    ("c  on a bubble", "copy it to the clipboard (works over SSH)"),
    ("Enter  on a card", "open or fold a thought or a tool call"),
    ("f / s  on a diff", "the whole diff / side by side or unified"),
    ("Ctrl+P", "command palette: sessions, agents, themes, actions"),
    ("F1", "this help"),
    ("Ctrl+Q", "quit (asks while a turn runs or a question waits)"),
)
"""Every key, as the help screen lists it."""

RAIL_LEGEND = "\n".join(
    (
        "Rail:  ! needs you   ✗ error   ◆ finished, unread   ● working",
        "◌ starting   ○ idle   · closed",
    )
)
"""The rail's glyphs, on two lines that fit an 80-column terminal (and wrap if narrower)."""


class HelpScreen(Dialog[None]):
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
            yield Static(Content(RAIL_LEGEND), classes="hint")
            yield Label("Esc closes this help", classes="hint")


class OptionsScreen(Dialog[OptionChoice | None]):
    """Every mode and config option the agent offers (model, thinking level...); Enter sets
    the highlighted value."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Close")]

    def __init__(self, choices: list[OptionChoice]) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Agent options", classes="dialog-title")
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


class PlanScreen(Dialog[None]):
    """A session's latest plan, as a checklist."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,p,q", "dismiss(None)", "Close")]

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

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss(None)", "Close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.heading = title
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="dialog"):
            yield Label(Content(clean_line(self.heading)), classes="dialog-title")
            yield Static(Text(printable(self.text)))
            yield Label("Esc closes", classes="hint")
