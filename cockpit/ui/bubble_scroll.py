"""A scroll of bubbles that keeps the reader's place: the items in view and where they are
on screen (to put them back once the content changed around them), and the keys and the
mouse a reader moves with: Up and Down from item to item (where to is
`cockpit.ui.transcript_rules.step`), PageUp and PageDown, the wheel. The transcript
(`cockpit.ui.transcript.TranscriptView`) is one: it says which items there are, and
loads a page when the view reaches an edge of what is mounted."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widget import Widget

from cockpit.compat.textual_private import layout_pending
from cockpit.ui.transcript_rules import reveal, step

Anchor = list[tuple[Widget, int]]
"""Widgets in view and their lines from the top of the view."""

LAYOUT_WAITS = 10
"""Refreshes a kept place waits at most for the screen to lay out what changed (one,
nearly always; a view that keeps changing is put back by the regions it has after ten)."""


class BubbleScroll(VerticalScroll):
    """Items one under the other, stepped through with Up and Down."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "previous_item", "Previous bubble", show=False),
        Binding("down,j", "next_item", "Next bubble", show=False),
    ]

    def _items(self) -> list[Widget]:
        """What Up and Down move between, in order (the subclass says)."""
        raise NotImplementedError

    def _check_edges(self) -> None:
        """Load what lies past an edge the view reached (the subclass does; nothing here)."""

    # -- keeping the place -------------------------------------------------------------------

    def _view_lines(self) -> tuple[int, int]:
        """The first line in view and the line after the last, in the window's lines."""
        top = round(self.scroll_y)
        return top, top + self.scrollable_content_region.height

    def _anchor(self) -> Anchor:
        """The widgets in view and where they are on screen, to keep them there while the
        window changes around them."""
        top, bottom = self._view_lines()
        anchor: Anchor = []
        for widget in self._items():
            region = widget.virtual_region
            if region.height and region.bottom > top and region.y < bottom:
                anchor.append((widget, region.y - top))
        return anchor

    def _restore(self, anchor: Anchor, waits: int = LAYOUT_WAITS) -> None:
        """Put the first widget of `anchor` still mounted back where it was on screen, by
        its region once the screen has laid out what changed (before, every region is the
        old one: nothing would seem to have moved, and then the view would jump)."""
        if waits and layout_pending(self):
            self.call_after_refresh(self._restore, anchor, waits - 1)
            return
        for widget, offset in anchor:
            if widget.parent is not self:
                continue
            region = widget.virtual_region
            if region.height:
                if round(self.scroll_y) != region.y - offset:
                    self.scroll_to(y=region.y - offset, animate=False, immediate=True)
                return

    async def _settle(self, anchor: Anchor) -> None:
        """Once the screen has laid out a change of the window, keep the place."""
        if not anchor:
            return
        if not await self.wait_for_refresh():
            # called on the view's own task: it cannot wait for its own refresh
            self.call_after_refresh(self._restore, anchor)
            return
        for _ in range(LAYOUT_WAITS):  # here, still holding the window: a scroll seen
            if not layout_pending(self):  # before the place is back could load a page
                break
            await self.wait_for_refresh()
        self._restore(anchor, waits=0)

    # -- keys and the mouse ------------------------------------------------------------------

    def action_page_up(self) -> None:
        self.scroll_to(
            y=self.scroll_y - self.scrollable_content_region.height, animate=False, immediate=True
        )
        self._check_edges()

    def action_page_down(self) -> None:
        self.scroll_to(
            y=self.scroll_y + self.scrollable_content_region.height, animate=False, immediate=True
        )
        self._check_edges()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._check_edges()  # at the top, the wheel cannot scroll: it loads instead

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._check_edges()

    def action_next_item(self) -> None:
        """Down: the next bubble (a bubble taller than the view scrolls first)."""
        self._step(1)

    def action_previous_item(self) -> None:
        """Up: the previous bubble (a bubble taller than the view scrolls first)."""
        self._step(-1)

    def _step(self, direction: int) -> None:
        items = self._items()
        if not items:
            return
        top, bottom = self._view_lines()
        focused = self.screen.focused
        index = items.index(focused) if focused is not None and focused in items else None
        regions = [item.virtual_region for item in items]
        move = step(regions, index, top, bottom, direction)
        if move.scroll_to is not None:
            self._scroll_within(move.scroll_to)
            return
        if not 0 <= move.index < len(items):
            # Past the first or the last bubble mounted: to that edge, where the next
            # page loads (the focused bubble stays in place on screen).
            self._scroll_within(0 if direction < 0 else self.max_scroll_y)
            self._check_edges()
            return
        target = items[move.index]
        self._reveal(target, direction)
        target.focus(scroll_visible=False)

    def _scroll_within(self, y: float) -> None:
        self.scroll_to(y=y, animate=False, immediate=True)

    def _reveal(self, widget: Widget, direction: int) -> None:
        """Scroll `widget` into view: all of it when it fits, else its first lines going
        down and its last lines going up."""
        top, bottom = self._view_lines()
        target = reveal(widget.virtual_region, top, bottom, direction)
        if target != top:
            self._scroll_within(target)
