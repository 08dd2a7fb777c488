"""The session rail: every session as one cheap option line (an OptionList), with a status
glyph, its title, agent, folder and age, and the session on screen marked. Compact mode
(narrow terminals) keeps the glyph and title only."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.widgets.option_list import Option

from cockpit.text.textout import RUN_MARK, age
from cockpit.ui.listing import Listing
from cockpit.ui.one_line import clean_line, clip_cells, short_folder
from cockpit.ui.session_states import GLYPHS, RailState


@dataclass(frozen=True)
class RailEntry:
    """What the rail shows for one session."""

    session: str
    state: str
    title: str
    agent: str
    folder: str
    seconds_old: float
    run: bool = False
    """True for a session `cockpit run` made: its first line ends with a dim `run`."""
    current: bool = False
    """True for the session on screen: its line starts with `CURRENT_MARK`."""
    worktree: str = ""
    """A worktree session's branch and state (`+3 ↑1 ↓0 cockpit/fix-1a2b`), shown on its
    second line in place of the folder; "" for a session in none."""


CURRENT_MARK = "►"
"""Before the session on screen, in a column of its own: a shape that says "you are here"
where colours are few (the row's highlight is then only an underline, and a theme's
highlight may sit close to the rail's background), and that no state glyph shares."""


def rail_title(waiting: int, unread: int) -> str:
    """The rail's title: how many sessions need the user and how many have output they
    have not read, each with the glyph its entries carry (`Sessions !2 ◆1`), short enough
    for the compact rail (the terminal's title says it in words)."""
    counts = [
        f"{GLYPHS[state]}{count}"
        for state, count in ((RailState.NEEDS_YOU, waiting), (RailState.UNREAD, unread))
        if count
    ]
    return " ".join(["Sessions", *counts])


def entry_text(entry: RailEntry, compact: bool, width: int = 30) -> Text:
    """The option's prompt: `CURRENT_MARK` for the session on screen (a blank for the
    others), a glyph coloured by state, the title (a run's with `run` at the rail's right
    edge, which the title gives way to), then (unless compact) a second line with agent,
    folder (a worktree session's branch and state instead) and age; every line cut to the
    rail's width."""
    text = Text()
    text.append(CURRENT_MARK if entry.current else " ")
    text.append(GLYPHS.get(entry.state, " "))
    mark = f" {RUN_MARK}" if entry.run else ""
    title = clip_cells(clean_line(entry.title), width - 3 - len(mark))
    text.append(" " + title, style="bold" if entry.state in ("needs-you", "unread") else "")
    if mark:
        gap = width - 3 - cell_len(title) - len(mark)
        text.append(" " * gap + mark, style="dim")
    if not compact:
        when = age(entry.seconds_old)
        where = entry.worktree or short_folder(entry.folder)
        place = clean_line(f"{entry.agent} · {where}")
        text.append(f"\n   {clip_cells(place, width - len(when) - 6)} · {when}", style="dim")
    return text


class SessionRail(Listing):
    """The list of sessions; highlighting one shows it (`p`, the app's key, its plan)."""

    # Its place (width, height), its edges and its look with the focus are in the app's
    # stylesheet (themes/cockpit.tcss), which says why they cannot be here.
    DEFAULT_CSS = """
    SessionRail {
        border-title-color: $text-muted;
        background: $surface;
        padding: 0;
    }
    """

    def highlighted_session(self) -> str | None:
        """The id of the session highlighted in the rail, if any."""
        if self.highlighted is None:
            return None
        return self.get_option_at_index(self.highlighted).id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.compact = False
        self._entries: dict[str, RailEntry] = {}
        self._styles: dict[str, str] = {}
        self._current_colour = ""

    def set_state_colours(self, styles: dict[str, str], current: str = "") -> None:
        """The colour of each state (from the theme's status variables), and of the mark of
        the session on screen."""
        self._styles = styles
        self._current_colour = current

    @property
    def styled(self) -> bool:
        """True once the states have their colours."""
        return bool(self._styles)

    def _prompt(self, entry: RailEntry) -> Text:
        text = entry_text(entry, self.compact, max(self.scrollable_content_region.width, 10))
        colour = self._styles.get(entry.state)
        if colour:
            text.stylize(Style(bold=True, color=Color.parse(colour).rich_color), 1, 2)
        if entry.current and self._current_colour:
            mark = Style(bold=True, color=Color.parse(self._current_colour).rich_color)
            text.stylize(mark, 0, 1)
        return text

    def show(self, entries: list[RailEntry], current: str | None) -> None:
        """Show these sessions, in this order, with `current` highlighted."""
        order = [entry.session for entry in entries]
        if order != list(self._entries) or any(e != self._entries.get(e.session) for e in entries):
            if order != list(self._entries):
                self.clear_options()
                self.add_options(Option(self._prompt(entry), id=entry.session) for entry in entries)
            else:
                for entry in entries:
                    if entry != self._entries[entry.session]:
                        self.replace_option_prompt(entry.session, self._prompt(entry))
            self._entries = {entry.session: entry for entry in entries}
        if current is not None and current in self._entries:
            index = order.index(current)
            if self.highlighted != index:
                self.highlighted = index

    def restyle(self) -> None:
        """Redraw every entry (the theme or the compact mode changed)."""
        entries = list(self._entries.values())
        self._entries = {}
        current = self.highlighted
        self.clear_options()
        self.show(
            entries,
            entries[current].session if current is not None and current < len(entries) else None,
        )
