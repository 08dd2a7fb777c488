"""The new-session dialog's folder field: what is typed there is completed from the folders
where the agents run, as a shell completes a path. Tab completes as far as the folders
agree (one whole, with its `/`), and moves on when there is nothing to complete; the first
folder that fits shows greyed after the text (Right or End takes it, Textual's suggester);
the line under the field lists the others.

The folders are the engine's answer (`EngineAPI.folders`), which comes when it comes: no
key waits for it, and an answer to a text the user has changed since is dropped."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from rich.cells import cell_len
from textual import events, work
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.suggester import Suggester
from textual.widget import Widget

from cockpit.folder_completion import FOLDERS_LIMIT, absolute, completed, suggested
from cockpit.ui.keys_in_order import Field, passed_on
from cockpit.ui.one_line import clean_line

log = logging.getLogger(__name__)

Ask = Callable[[str], Awaitable[list[str]]]
"""How the folders of a path are asked of the engine (`EngineAPI.folders`)."""


def candidates_line(names: Sequence[str], width: int) -> Content:
    """The folders a path may go on to, on one line `width` cells wide: as many names as
    fit, each with its `/`, then how many more there are (`50+`: the engine sends no more
    than its limit); a first name too long for the line is cut."""
    items = [clean_line(name) + "/" for name in names]
    line = ""
    for count in range(len(items), 0, -1):
        line = joined([*items[:count], more(len(items) - count, len(items))])
        if cell_len(line) <= width:
            break
    return Content.styled(line, "$text-muted").truncate(width, ellipsis=True)


def joined(parts: Sequence[str]) -> str:
    return "  ".join(part for part in parts if part)


def more(rest: int, listed: int) -> str:
    """`… 7 more` after the names shown ('' when none is left out)."""
    if rest <= 0:
        return ""
    return f"… {rest}+ more" if listed >= FOLDERS_LIMIT else f"… {rest} more"


class FolderLookup:
    """The folders a typed path may go on to, asked once per text: the suggester (as it is
    typed) and Tab share the answer to the latest text, and its question."""

    def __init__(self, ask: Ask, base: str) -> None:
        self.ask = ask
        self.base = base
        """The folder the dialog opened with: a relative path is under it."""
        self._latest: tuple[str, asyncio.Task[list[str]]] | None = None

    def known(self, typed: str) -> list[str] | None:
        """The folders for `typed` when they came already, else None."""
        if self._latest is None or self._latest[0] != typed or not self._latest[1].done():
            return None
        return self._latest[1].result()

    async def names(self, typed: str) -> list[str]:
        """The folders for `typed`: the answer to the question asked already for it, else
        to a new one. Shielded: a caller that goes away leaves it for the next."""
        if self._latest is None or self._latest[0] != typed:
            self._latest = (typed, asyncio.create_task(self._listed(typed)))
        return await asyncio.shield(self._latest[1])

    async def _listed(self, typed: str) -> list[str]:
        try:
            return list(await self.ask(absolute(typed, self.base)))
        except Exception as error:  # a cut link, an older service: no completion, no error
            log.debug("no folders listed for %r: %s", typed, error)
            return []

    def close(self) -> None:
        """Drop the question under way (the dialog is gone)."""
        if self._latest is not None:
            self._latest[1].cancel()


class FolderSuggester(Suggester):
    """Textual's inline suggestion, from the engine's folders; the folders that came are
    also handed to `listed` (the line under the field). Only the field's text as it is
    now is asked about: a burst of keys asks once, not once a key."""

    def __init__(
        self,
        lookup: FolderLookup,
        current: Callable[[], str],
        listed: Callable[[str, list[str]], None],
    ) -> None:
        super().__init__(use_cache=False, case_sensitive=True)  # folders come and go
        self.lookup = lookup
        self.current = current
        self.listed = listed

    async def get_suggestion(self, value: str) -> str | None:
        if value != self.current():
            return None  # typed over already: Textual would drop the answer
        names = await self.lookup.names(value)
        self.listed(value, names)
        return suggested(value, names)


class FolderField(Field):
    """A folder's path, completed from the folders where the agents run."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "complete", "Complete the folder", show=False),
    ]

    class Listed(Message):
        """The folders the field's text may go on to (none when the field was left)."""

        def __init__(self, names: tuple[str, ...]) -> None:
            super().__init__()
            self.names = names

    def __init__(self, value: str, lookup: FolderLookup, **kwargs: Any) -> None:
        suggester = FolderSuggester(lookup, lambda: self.value, self._listed)
        super().__init__(value, suggester=suggester, **kwargs)
        self.lookup = lookup

    async def on_key(self, event: events.Key) -> None:
        passed_on(self, event)  # Tab moved on before this key came: it is not the field's

    def _listed(self, typed: str, names: list[str]) -> None:
        if typed == self.value and self.has_focus:
            self.post_message(self.Listed(tuple(names)))

    def on_focus(self) -> None:
        self.run_worker(self._list(self.value), group="list", exclusive=True, exit_on_error=False)

    def on_blur(self) -> None:
        self.post_message(self.Listed(()))

    def on_unmount(self) -> None:
        self.lookup.close()

    async def _list(self, typed: str) -> None:
        self._listed(typed, await self.lookup.names(typed))

    async def action_complete(self) -> None:
        """Tab: complete the text, or move on when there is nothing to complete. When the
        folders are not known yet, the completion comes with them (keys go on meanwhile),
        unless the text changed before."""
        typed = self.value
        names = self.lookup.known(typed)
        if names is not None:
            self._complete(typed, names)
        else:
            self._complete_once_listed(typed)

    # A late answer must never end the app; and as a worker made by `work`, one cut before
    # it ran leaves no coroutine never awaited.
    @work(group="complete", exclusive=True, exit_on_error=False)
    async def _complete_once_listed(self, typed: str) -> None:
        names = await self.lookup.names(typed)
        if typed == self.value and self.has_focus:
            self._complete(typed, names)

    def _complete(self, typed: str, names: list[str]) -> None:
        done = completed(typed, names)
        if done == typed:
            self.screen.focus_next()
            return
        self.value = done
        self.cursor_position = len(done)

    def action_end(self, select: bool = False) -> None:
        """End goes to the end and takes the suggestion shown there, as Right does."""
        super().action_end(select)
        if not select:
            self.action_cursor_right()


class FolderCandidates(Widget):
    """The line under the folder field: the folders its text may go on to, from `indent`
    cells in (under the field, past its label)."""

    names: reactive[tuple[str, ...]] = reactive((), layout=False)

    def __init__(self, indent: int, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.indent = indent

    def render(self) -> Content:
        line = candidates_line(self.names, max(self.content_size.width - self.indent, 1))
        return Content(" " * self.indent) + line
