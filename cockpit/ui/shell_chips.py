"""The output of the user's own commands, waiting above the prompt to go with the next one.

When a command this screen started ends, its output becomes a chip above the prompt of
its session (`▤ ls -la · 42 lines ✕`). The chips showing when Enter sends a prompt to the
agent are what goes with it, and they go; a chip removed (its ✕, or Backspace in an empty
prompt) goes with nothing. `ChipShelf` keeps each session's chips, in memory only; the bar
(`ShellChips`) shows those of the session whose draft the prompt holds, one a line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from cockpit.ui.shell_rules import chip_label

MAX_CHIPS = 3
"""Chips a session keeps at most: a fourth command's output pushes out the oldest."""


@dataclass(frozen=True)
class Chip:
    """A command's output that may go with the next prompt: its row, what ran, how long."""

    key: str
    command: str
    lines: int

    @property
    def label(self) -> str:
        return chip_label(self.command, self.lines)


class ChipShelf:
    """Each session's chips, oldest first; `changed` is told the session whose chips
    changed (the bar shows them again)."""

    def __init__(self, changed: Callable[[str], None] = lambda session: None) -> None:
        self._chips: dict[str, list[Chip]] = {}
        self._changed = changed

    def of(self, session: str | None) -> tuple[Chip, ...]:
        """The chips of `session`, oldest first."""
        return tuple(self._chips.get(session or "", ()))

    def keys(self, session: str | None) -> tuple[str, ...]:
        """The rows whose output goes with `session`'s next prompt: its chips'."""
        return tuple(chip.key for chip in self.of(session))

    def add(self, session: str, chip: Chip) -> None:
        """A command's output is ready to go with the next prompt (once per command)."""
        chips = [c for c in self._chips.get(session, []) if c.key != chip.key]
        self._chips[session] = [*chips, chip][-MAX_CHIPS:]
        self._changed(session)

    def drop(self, session: str, key: str) -> bool:
        """Remove one chip (its ✕); False when it was not there."""
        chips = self._chips.get(session, [])
        kept = [chip for chip in chips if chip.key != key]
        if len(kept) == len(chips):
            return False
        self._set(session, kept)
        return True

    def drop_last(self, session: str) -> bool:
        """Remove the newest chip (Backspace in an empty prompt); False when none."""
        chips = self._chips.get(session, [])
        if not chips:
            return False
        self._set(session, chips[:-1])
        return True

    def sent(self, session: str, keys: Sequence[str]) -> None:
        """These chips went with a prompt: they go."""
        chips = self._chips.get(session, [])
        kept = [chip for chip in chips if chip.key not in keys]
        if len(kept) != len(chips):
            self._set(session, kept)

    def _set(self, session: str, chips: list[Chip]) -> None:
        if chips:
            self._chips[session] = chips
        else:
            self._chips.pop(session, None)
        self._changed(session)


class ChipClose(Static):
    """A chip's ✕: a click removes the chip."""

    DEFAULT_CSS = "ChipClose { width: 2; padding: 0 0 0 1; }"

    def __init__(self) -> None:
        super().__init__(Content("✕"))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        chip = self.parent
        if isinstance(chip, ShellChip) and chip.chip is not None:
            self.post_message(ShellChips.DropWanted(chip.chip.key))


class ShellChip(Horizontal):
    """One chip: what ran and how long its output is, and its ✕ (one of the bar's
    MAX_CHIPS places, hidden while it holds none). A narrow screen cuts the label, never
    the ✕."""

    DEFAULT_CSS = """
    ShellChip {
        width: auto;
        max-width: 100%;
        height: 1;
        padding: 0 1;
        background: $bubble-user-background;
        color: $text;
    }
    ShellChip > .chip-label { width: auto; text-wrap: nowrap; }
    ShellChip > ChipClose { color: $text-muted; }
    ShellChip > ChipClose:hover { color: $text; text-style: bold; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.chip: Chip | None = None
        self.display = False

    def compose(self) -> ComposeResult:
        yield Static(classes="chip-label")
        yield ChipClose()

    def hold(self, chip: Chip | None) -> None:
        """Show `chip` here (None: nothing, and the place hides)."""
        self.chip = chip
        self.display = chip is not None
        if chip is not None:
            self.query_one(".chip-label", Static).update(Content(chip.label))


class ShellChips(Vertical):
    """The chips of the session whose draft the prompt holds, one a line above it (every
    one shows whole: only what shows goes with the prompt), hidden while there are none."""

    DEFAULT_CSS = """
    ShellChips {
        height: auto;
        width: 100%;
        padding: 0 1;
    }
    """

    class DropWanted(Message):
        """The user clicked a chip's ✕."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.chips: tuple[Chip, ...] = ()
        self.display = False

    def compose(self) -> ComposeResult:
        for _ in range(MAX_CHIPS):
            yield ShellChip()

    def show(self, chips: tuple[Chip, ...]) -> None:
        """Show these chips (none: the line goes)."""
        self.chips = chips
        self.display = bool(chips)
        for index, place in enumerate(self.query(ShellChip)):
            place.hold(chips[index] if index < len(chips) else None)
