"""The new-session dialog: an agent (every one listed, installed ones first, how to install
the others) and a folder, completed from the folders where the agents run; and its pure
rules (order, lines, detail, sizes)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.console import RenderableType
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Select
from textual.widgets.option_list import Option

from cockpit.api import AgentInfo, AgentSpec, RepositoryInfo, WorktreeRequest
from cockpit.folder_completion import absolute
from cockpit.text.sanitize import printable
from cockpit.ui.dialog import Dialog, closed_already, escape
from cockpit.ui.folder_field import Ask, FolderCandidates, FolderField, FolderLookup
from cockpit.ui.keys_in_order import passed_on, ran_own_binding
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line


@dataclass(frozen=True)
class NewSessionChoice:
    """What the new-session dialog returns."""

    agent: str
    folder: str
    worktree: WorktreeRequest | None = None
    """A worktree of its own, when asked for."""
    repository: str | None = None
    """The top folder of the repository the folder is in, when the dialog knew it (the
    worktree choice is remembered for it)."""


AskRepository = Callable[[str], Awaitable[RepositoryInfo | None]]
"""The git repository a folder is in, where the agents run."""


NEW_SESSION_ROWS = 14
"""The new-session dialog's rows besides its agent list: border, padding, title, the
detail (4 lines), the folder, the folders it may go on to and the buttons, with the gaps
between them."""

FOLDER_LABEL_CELLS = 8
"""The width of the folder's label: the folders listed under the field start past it."""

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


def list_height(screen_rows: int, agents: int, worktree_rows: int = 0) -> int:
    """How many rows the agent list gets: every agent when the screen has room for them
    beside the rest of the dialog (with its `worktree_rows` in a repository), fewer (it
    scrolls) on a short one, never under 3."""
    return max(3, min(agents, screen_rows - NEW_SESSION_ROWS - worktree_rows))


def worktree_rows(repository: RepositoryInfo | None) -> int:
    """The dialog's rows for the worktree choice: none outside a repository, one for the
    box and its base, one to work on the base itself (when it is a branch), one more to
    carry uncommitted changes when there are some."""
    if repository is None:
        return 0
    return 3 if repository.dirty else 2


BRANCH_CELLS = 40
"""The widest branch name the box to work on it shows (a longer one is cut)."""


def on_branch_label(base: str) -> str:
    """The box that works on the base itself rather than on a new branch from it (only a
    branch can be: HEAD is the checkout's own)."""
    if base == "HEAD":
        return "Work on an existing branch (no new branch): choose it above"
    name = Content(clean_line(base)).truncate(BRANCH_CELLS, ellipsis=True).plain
    return f"Work on {name} itself (no new branch)"


def worktree_request(base: str, on_branch: bool, carry: bool) -> WorktreeRequest:
    """The worktree the dialog's choices ask for: on `base` itself when it is a branch and
    the user ticked that (git checks it out there), else on a new branch from `base`."""
    if on_branch and base != "HEAD":
        return WorktreeRequest(branch=base, carry_changes=carry)
    return WorktreeRequest(base=base, carry_changes=carry)


def stepped(values: Sequence[str], current: object, delta: int) -> str | None:
    """The value `delta` places from `current` in `values`, stopping at either end (the
    first one when `current` is none of them); None when there are none."""
    if not values:
        return None
    index = values.index(current) + delta if current in values else 0
    return values[max(0, min(index, len(values) - 1))]


def base_choices(repository: RepositoryInfo) -> list[tuple[str, str]]:
    """What a new branch may start from: the checkout's HEAD first, then each local
    branch."""
    head = f"HEAD ({repository.branch})" if repository.branch else "HEAD (detached)"
    return [(head, "HEAD"), *((clean_line(name), name) for name in repository.branches)]


NEW_BRANCH = "Own worktree on a new branch"
ON_BRANCH = "Own worktree on the branch"
"""The worktree box, on a new branch from the base or on the base itself."""


class AgentDetail(Widget):
    """The highlighted agent's detail, cut to the widget's own lines, so the dialog keeps
    its size as the highlight moves."""

    detail: reactive[Content] = reactive(Content(""), layout=False)

    def render(self) -> Content:
        return clamped(self.detail, self.content_size.width, self.content_size.height)


def handed_back(widget: Widget, event: events.Key) -> bool:
    """Send a key that reached the dialog after Enter chose (typed in one burst with it)
    on to the new session (True when it did)."""
    screen = widget.screen
    if not isinstance(screen, NewSessionScreen) or not screen.chosen:
        return False
    event.stop()
    event.prevent_default()
    screen.post_message(NewSessionScreen.KeyAfterChoice(event.key, event.character))
    return True


class AgentList(Listing):
    """The dialog's agents. Tab moves on to the folder as it comes (the screen's Tab runs
    only once the key has bubbled up), and what is typed after it in the same burst goes
    on to the folder too. Enter creates the session as it comes, too: the keys behind it
    are the new session's."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "app.focus_next", "Go to the folder", show=False),
    ]

    async def on_key(self, event: events.Key) -> None:
        await _key_of_a_choice(self, event)


async def _key_of_a_choice(widget: Widget, event: events.Key, text: bool = True) -> None:
    """A key reaching one of the dialog's choices (the agent list, a box): one the dialog
    hands back or passes on goes there; Enter creates the session as it comes; any other
    runs the widget's own binding at once (`text`: a printable key may be one too)."""
    if handed_back(widget, event) or passed_on(widget, event):
        return
    screen = widget.screen
    if event.key == "enter" and isinstance(screen, NewSessionScreen):
        event.stop()
        event.prevent_default()
        screen.create()
        return
    await ran_own_binding(widget, event, text=text)


class ChoiceFolder(FolderField):
    """The dialog's folder: Enter creates the session as it comes, with the folder as
    typed until then (the keys behind it are the new session's)."""

    async def on_key(self, event: events.Key) -> None:
        handed_back(self, event)

    async def action_submit(self) -> None:
        screen = self.screen
        if isinstance(screen, NewSessionScreen):
            screen.create()


MOVE_ON: list[BindingType] = [
    Binding("tab", "app.focus_next", "Next", show=False),
    Binding("shift+tab", "app.focus_previous", "Previous", show=False),
]
"""Tab and Shift+Tab as bindings of a choice itself, so they move on as they come (the
keys typed after them go where they lead)."""


class ChoiceBox(Checkbox):
    """A box of the dialog: Space ticks it, Tab moves on and Enter creates the session,
    each as it comes (Space then Enter in one burst creates with the box ticked). A tick
    shows as an X, and no tick as an empty box: Textual's box shows its X either way, in
    another colour, which a 16-colour terminal may not tell apart."""

    BINDINGS: ClassVar[list[BindingType]] = MOVE_ON

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.BUTTON_INNER = box_mark(self.value)

    def watch_value(self) -> None:
        self.BUTTON_INNER = box_mark(self.value)
        super().watch_value()

    async def on_key(self, event: events.Key) -> None:
        await _key_of_a_choice(self, event, text=False)


def box_mark(ticked: bool) -> str:
    """What is inside a box: an X when it is ticked, nothing when it is not."""
    return "X" if ticked else " "


class ChoiceSelect(Select[str]):
    """The base of the worktree: Up and Down step through it in place, Tab moves on and
    Enter creates the session, each as it comes; Space opens the list. An arrow that opened
    the list, as in a plain select, would send the keys typed after it astray."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *MOVE_ON,
        Binding("up", "step(-1)", "Previous base", show=False),
        Binding("down", "step(1)", "Next base", show=False),
    ]

    values: tuple[str, ...] = ()
    """The bases offered, in order."""

    def set_options(self, options: Iterable[tuple[RenderableType, str]]) -> None:
        listed = list(options)
        self.values = tuple(value for _, value in listed)
        super().set_options(listed)

    async def on_key(self, event: events.Key) -> None:
        await _key_of_a_choice(self, event, text=False)

    def action_step(self, delta: int) -> None:
        value = stepped(self.values, self.value, delta)
        if value is not None and value != self.value:
            self.value = value
            screen = self.screen
            if isinstance(screen, NewSessionScreen):
                screen.base_chosen()  # now: a Tab typed next reaches the box it shows


class NewSessionScreen(Dialog[NewSessionChoice | None]):
    """Pick an agent and a folder. Every agent is listed, installed ones first; Enter
    creates the session at once (Tab reaches the folder, where Tab completes it). One that
    is not installed says how to install it (F3 copies that) and is refused, with the
    reason in the dialog: a session that cannot start would only sit in the rail. It is
    looked up again on each Enter, so installing it meanwhile is enough. Whether the folder
    is one is the engine's to say, where the agents run, as it creates the session."""

    # It fits 80x24 with every bundled agent and the longest detail: the agent list
    # (shorter on a short screen, where it scrolls), a detail of four lines whatever the
    # agent, the folder on one line, the folders it may go on to on the next (the gap
    # above the buttons when there are none) and the buttons.
    DEFAULT_CSS = """
    NewSessionScreen #dialog.new-session {
        max-height: 100%;
    }
    NewSessionScreen #dialog.new-session .dialog-title {
        margin-bottom: 0;
    }
    NewSessionScreen #dialog.new-session #agent-detail {
        height: 4;
        margin-top: 1;
    }
    NewSessionScreen #dialog.new-session .folder-row {
        height: 1;
        margin-top: 1;
    }
    NewSessionScreen #dialog.new-session .folder-label {
        width: 8;  /* FOLDER_LABEL_CELLS */
    }
    NewSessionScreen #dialog.new-session #folder {
        width: 1fr;
        background: $panel;
    }
    NewSessionScreen #dialog.new-session #folder-candidates {
        height: 1;
        display: none;
    }
    NewSessionScreen #dialog.new-session.-listing #folder-candidates {
        display: block;
    }
    NewSessionScreen #dialog.new-session.-listing .buttons {
        margin-top: 0;
    }
    NewSessionScreen #dialog.new-session .worktree-row {
        height: 1;
        display: none;
    }
    NewSessionScreen #dialog.new-session.-repository #worktree-row {
        display: block;
    }
    NewSessionScreen #dialog.new-session.-repository #branch-row,
    NewSessionScreen #dialog.new-session.-repository.-dirty #carry-row {
        display: block;
    }
    NewSessionScreen #dialog.new-session #branch-row {
        padding-left: 2;
    }
    NewSessionScreen #dialog.new-session .worktree-row Checkbox {
        width: auto;
    }
    NewSessionScreen #dialog.new-session .worktree-row Label {
        margin: 0 1;
    }
    NewSessionScreen #dialog.new-session #worktree-base {
        width: 1fr;
    }
    NewSessionScreen #dialog.new-session Button {
        width: auto;
        min-width: 10;
    }
    NewSessionScreen #dialog.new-session .buttons .hint {
        margin: 0 0 0 1;
    }
    """

    class KeyAfterChoice(Message):
        """A key that reached the dialog after Enter chose (typed in one burst with it):
        it belongs to the new session, ahead of the keys held since."""

        def __init__(self, key: str, character: str | None) -> None:
            super().__init__()
            self.key = key
            self.character = character

    AUTO_FOCUS = "#agents"  # at compose time: a key typed right after Ctrl+N lands here
    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Cancel"),
        Binding("f3", "copy_install", "Copy the install command"),
        # priority: ticked as it arrives, before an Enter typed after it creates.
        Binding("alt+w", "toggle_worktree", "Own worktree", show=False, priority=True),
    ]

    def __init__(
        self,
        agents: list[AgentInfo],
        folder: str,
        default: str,
        installed: Callable[[str], bool],
        folders: Ask,
        *,
        at_folder: bool = False,
        on_choice: Callable[[], None] = lambda: None,
        repository: AskRepository | None = None,
        worktree_default: Callable[[str], bool] = lambda top: False,
        worktree: WorktreeRequest | None = None,
    ) -> None:
        super().__init__()
        self.ask_repository = repository
        """Asked in the background as the dialog opens and the folder changes."""
        self.worktree_default = worktree_default
        """Whether a repository's box starts ticked (the user's last choice there)."""
        self.worktree_chosen = worktree
        """Opened again on a worktree the engine refused: the choices start as they were."""
        self.repository: RepositoryInfo | None = None
        """The repository the folder is in, as last told (None: none, or not known yet)."""
        self.on_choice = on_choice
        """Called the moment the dialog chooses: the keys typed from then on wait for the
        new session (or for the dialog, opened again when the engine refuses)."""
        self.chosen = False
        self.available = {info.spec.name: info.installed for info in agents}
        self.agents = agent_order([info.spec for info in agents], self.available)
        self.installed = installed
        """Whether an agent is installed now, asked of the engine (where agents run)."""
        self.folder = folder
        self.default = default
        self.lookup = FolderLookup(folders, folder)
        """The folders where the agents run, asked as the folder is typed."""
        self.at_folder = at_folder
        """Opened again on a folder the engine refused: the folder is what to fix."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="new-session"):
            yield Label("New session", classes="dialog-title")
            yield AgentList(
                *(Option(self._line(spec), id=spec.name) for spec in self.agents),
                id="agents",
                compact=True,
            )
            yield AgentDetail(id="agent-detail")
            with Horizontal(classes="folder-row"):
                yield Label("Folder", classes="folder-label")
                yield ChoiceFolder(
                    self.folder,
                    self.lookup,
                    id="folder",
                    compact=True,
                    select_on_focus=not self.at_folder,  # the text is to fix, not replace
                )
            yield FolderCandidates(FOLDER_LABEL_CELLS, id="folder-candidates")
            with Horizontal(id="worktree-row", classes="worktree-row"):
                yield ChoiceBox(NEW_BRANCH, id="worktree", compact=True)
                yield Label("from", id="worktree-from")
                yield ChoiceSelect([], id="worktree-base", compact=True, allow_blank=True)
            with Horizontal(id="branch-row", classes="worktree-row"):
                yield ChoiceBox("", id="on-branch", compact=True)
            with Horizontal(id="carry-row", classes="worktree-row"):
                yield Label("Uncommitted changes here:")
                yield ChoiceBox("carry them into the worktree", id="carry", compact=True)
            with Horizontal(classes="buttons"):
                yield Button("Create", variant="primary", id="create", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
                yield Label("Enter creates · Tab: folder · Esc cancels", classes="hint")

    def on_mount(self) -> None:
        agents = self.query_one("#agents", OptionList)
        names = [spec.name for spec in self.agents]
        agents.highlighted = names.index(self.default) if self.default in names else 0
        self._fit(self.app.size.height)
        if self.at_folder:
            self.query_one("#folder").focus()
        self._look_up(self.folder)

    def on_resize(self) -> None:
        self._fit(self.app.size.height)

    def _fit(self, rows: int) -> None:
        self.query_one("#agents", OptionList).styles.max_height = list_height(
            rows, len(self.agents), worktree_rows(self.repository)
        )

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "folder":
            self._look_up(event.value.strip() or self.folder)

    def _look_up(self, typed: str) -> None:
        """Ask which repository the folder is in, beside the keys (never awaited on one)."""
        if self.ask_repository is not None:
            folder = absolute(typed, self.folder)
            # A partial: a worker replaced before it starts leaves no coroutine behind.
            work: Callable[[], object] = partial(self._repository_of, folder)
            self.run_worker(
                work,
                group="repository",
                exclusive=True,
                exit_on_error=False,  # a late answer must never end the app
            )

    async def _repository_of(self, folder: str) -> None:
        assert self.ask_repository is not None
        try:
            found = await self.ask_repository(folder)
        except Exception:  # no answer: the dialog stays as without a repository
            found = None
        field = self.query_one_optional("#folder", Input)
        if field is None or not self.is_attached:  # the dialog closed meanwhile
            return
        typed = field.value.strip() or self.folder
        if absolute(typed, self.folder) == folder and not self.chosen:
            self._show_repository(found)

    def _show_repository(self, found: RepositoryInfo | None) -> None:
        """Offer a worktree in `found` (hide the offer outside a repository)."""
        before, self.repository = self.repository, found
        dialog = self.query_one("#dialog")
        dialog.set_class(found is not None, "-repository")
        dialog.set_class(found is not None and found.dirty, "-dirty")
        new_top = found is not None and (before is None or before.top != found.top)
        if found is not None and new_top:
            self.query_one("#worktree", Checkbox).value = self.worktree_default(found.top)
            self.query_one("#on-branch", Checkbox).value = False
            self.query_one("#carry", Checkbox).value = False
        if found is not None and (before is None or before.branches != found.branches):
            base = self.query_one("#worktree-base", ChoiceSelect)
            base.set_options(base_choices(found))
            base.value = "HEAD"
        chosen, refused_branch = self.worktree_chosen, False
        if found is not None and new_top and chosen is not None:
            self.worktree_chosen = None  # once: the folder typed next is a new choice
            self._choose(found, chosen)
            refused_branch = chosen.branch is not None
        self.base_chosen()
        if refused_branch:
            self.query_one("#on-branch").focus()  # what to change: the box, or the base

    def _choose(self, found: RepositoryInfo, chosen: WorktreeRequest) -> None:
        """Set the worktree choices as they were chosen before (the engine refused them)."""
        base = chosen.branch or chosen.base
        self.query_one("#worktree", Checkbox).value = True
        if base == "HEAD" or base in found.branches:
            self.query_one("#worktree-base", ChoiceSelect).value = base
        self.query_one("#on-branch", Checkbox).value = chosen.branch is not None
        self.query_one("#carry", Checkbox).value = chosen.carry_changes

    def _base(self) -> str:
        value = self.query_one("#worktree-base", ChoiceSelect).value
        return value if isinstance(value, str) else "HEAD"

    def base_chosen(self) -> None:
        """Offer to work on the base itself when it is a branch (at once, so a Tab typed
        next reaches the box; it is always there, so the dialog keeps its size), and say
        which branch the worktree will be on."""
        base = self._base()
        on_branch = self.query_one("#on-branch", Checkbox)
        on_branch.label = on_branch_label(base)
        on_branch.disabled = base == "HEAD"
        if base == "HEAD":
            on_branch.value = False
        self._show_on_branch(on_branch.value)
        self._fit(self.app.size.height)

    def _show_on_branch(self, on_branch: bool) -> None:
        """The worktree box says whether its branch is new or the base itself."""
        self.query_one("#worktree", Checkbox).label = ON_BRANCH if on_branch else NEW_BRANCH
        self.query_one("#worktree-from").display = not on_branch

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "worktree-base":
            self.base_chosen()  # chosen from the list (the arrows call it themselves)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "on-branch":
            self._show_on_branch(event.value and self._base() != "HEAD")

    def action_toggle_worktree(self) -> None:
        """Alt+W: tick or untick the worktree box (in a repository)."""
        if self.repository is not None:
            self.query_one("#worktree", Checkbox).toggle()

    def _worktree(self) -> WorktreeRequest | None:
        """The worktree asked for, if any (only in a repository, with the box ticked)."""
        repository = self.repository
        if repository is None or not self.query_one("#worktree", Checkbox).value:
            return None
        return worktree_request(
            self._base(),
            self.query_one("#on-branch", Checkbox).value,
            repository.dirty and self.query_one("#carry", Checkbox).value,
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
        self.create()  # a click: Enter creates as it comes

    def on_folder_field_listed(self, event: FolderField.Listed) -> None:
        """The folders listed take the gap above the buttons: the dialog keeps its size."""
        self.query_one(FolderCandidates).names = event.names
        self.query_one("#dialog").set_class(bool(event.names), "-listing")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self.create()
        else:
            self.dismiss(None)

    def action_copy_install(self) -> None:
        """Copy the highlighted agent's install command (OSC 52: it works over SSH)."""
        spec = self._highlighted()
        if spec is None or self._ready(spec) or not spec.install:
            return
        self.app.copy_to_clipboard(spec.install)
        self.notify("Copied the install command", timeout=2)

    def create(self) -> None:
        """Choose the highlighted agent and the folder, now: the keys typed after this
        wait for the new session."""
        if self.chosen or closed_already(self):  # an Enter behind the Esc that closed it
            return
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
        self.chosen = True
        self.on_choice()
        top = self.repository.top if self.repository is not None else None
        self.dismiss(
            NewSessionChoice(spec.name, absolute(folder, self.folder), self._worktree(), top)
        )
