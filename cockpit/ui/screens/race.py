"""A race's comparison: each contender's status, files and lines changed, test, time and
cost, read again every second while it runs. Enter shows the contender's session, `k` keeps
it (merged into the checkout, the others archived, after asking), Esc closes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from cockpit.api import Contender
from cockpit.ui.dialog import Dialog, escape
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line

REFRESH = 1.0
"""Seconds between readings of the standings."""
TEST_STYLES = {"passed": "green", "failed": "red", "running": "yellow"}


def contender_line(number: int, contender: Contender) -> Text:
    """A contender: its place, agent and state; under it what it changed, its test, its
    time and cost."""
    state = contender.worktree or str(contender.status)
    text = Text(f"{number}. ", style="bold")
    text.append(clean_line(contender.agent), style="bold")
    text.append(f" · {contender.session} · {state}", style="dim")
    files = "file" if contender.files == 1 else "files"
    text.append(f"\n   {contender.files} {files} +{contender.added} -{contender.removed} · ")
    text.append(f"test {contender.test}", style=TEST_STYLES.get(contender.test, "dim"))
    took = f"{contender.seconds:.0f}s" if contender.seconds is not None else "…"
    text.append(f" · {took}", style="dim")
    spent = []
    if contender.tokens is not None:
        spent.append(f"{contender.tokens:,.0f} tokens")
    if contender.cost is not None:
        spent.append(f"{contender.cost:.2f} {contender.currency}")
    if spent:
        text.append(f" · {' · '.join(spent)}", style="dim")
    return text


class RaceScreen(Dialog[tuple[str, str] | None]):
    """The comparison of one race; answers ("show", session) or ("keep", session)."""

    DEFAULT_CSS = """
    RaceScreen #dialog.race {
        width: 90;
    }
    RaceScreen #contenders {
        height: auto;
        max-height: 14;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        escape("Close"),
        Binding("k", "keep", "Keep", priority=True),
    ]

    def __init__(self, prompt: str, standings: Callable[[], Awaitable[list[Contender]]]) -> None:
        super().__init__()
        self.prompt = prompt
        self.standings = standings
        self.contenders: list[Contender] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="race"):
            yield Label(f"Race: {clean_line(self.prompt)}", classes="dialog-title")
            yield Listing(Option(Text("Reading the race…", style="dim"), disabled=True),
                          id="contenders")  # fmt: skip
            hint = "Enter shows its session · k keeps it: merged, the others archived · Esc"
            yield Label(hint, classes="hint")

    def on_mount(self) -> None:
        self.query_one("#contenders", OptionList).focus()
        self.read()
        self.set_interval(REFRESH, self.read)

    @work(exclusive=True, group="race", exit_on_error=False)
    async def read(self) -> None:
        """Read the standings again (a failure leaves the last ones shown)."""
        found = await self.standings()
        if self.is_attached:
            self.show(found)

    def show(self, contenders: list[Contender]) -> None:
        listing = self.query_one("#contenders", OptionList)
        index = listing.highlighted
        self.contenders = contenders
        listing.clear_options()
        if not contenders:
            listing.add_option(Option(Text("No such race.", style="dim"), disabled=True))
            return
        listing.add_options(
            [Option(contender_line(n, c), id=c.session) for n, c in enumerate(contenders, 1)]
        )
        listing.highlighted = min(index or 0, len(contenders) - 1)

    def _highlighted(self) -> str | None:
        option = self.query_one("#contenders", OptionList).highlighted_option
        return option.id if option is not None else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(("show", event.option.id))

    def action_keep(self) -> None:
        session = self._highlighted()
        if session is not None:
            self.dismiss(("keep", session))
