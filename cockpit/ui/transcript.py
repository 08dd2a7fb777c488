"""The transcript of the session on screen: a bounded window of bubbles over its rows.

It opens on the tail page from the store (no agent needed), loads earlier pages as the
user scrolls up and merges them by key, evicts far-away bubbles so the number mounted
stays bounded, and folds live frames through the pure `ViewTranscript` (length guard by
`n`, reads replace). Reading far up detaches the window from the tail: the rows after a
point (`gap_after`) are missing until the user comes back down, while the live turn stays
pinned below them and keeps taking its frames; other new output is announced, and coming
back down (or jumping to the end) reads it from the store.

Whenever the window changes above or around what the user reads, the bubbles in view are
put back where they were on screen, and the edges are checked again: scrolling never
sticks at a page boundary and never jumps by a page.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import ClassVar

from textual import events
from textual._styles_cache import StylesCache
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from cockpit.api import EngineAPI, PermissionRequest, Status
from cockpit.ui.bubbles import AgentBubble, BubbleWidget, make_bubble
from cockpit.ui.permission import PermissionPrompt
from cockpit.ui.viewmodel import evict
from store import NOTE_KINDS, Bubble, Frame, Row, ViewTranscript

BUBBLE_LIMIT = 150
"""Most bubbles mounted at once, whatever the transcript's length (plus the live turn)."""

EDGE = 2
"""Lines from the top (or from the missing rows below) at which the next page loads."""

Anchor = list[tuple[Widget, int]]
"""Widgets in view and their lines from the top of the view."""


def release(widgets: Iterable[Widget]) -> None:
    """Let go of what Textual keeps of removed widgets.

    Textual 8 caches `StylesCache.get_inner_outer` in an `lru_cache` keyed by the
    instance, so the style caches of the last 1,024 widgets that painted stay alive, with
    every line they rendered, long after the widgets are gone: in a long session that was
    most of what the window is meant to save (RSS grew with the transcript).
    """
    for widget in widgets:
        widget._styles_cache.clear()
    StylesCache.get_inner_outer.cache_clear()


class TranscriptView(VerticalScroll):
    """The bubbles of one session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "previous_item", "Previous bubble", show=False),
        Binding("down,j", "next_item", "Next bubble", show=False),
        Binding("home,ctrl+home", "jump_start", "First message", show=False),
        Binding("end", "jump_end", "Newest", show=False),
    ]

    class Unseen(Message):
        """New output arrived below what the user is reading (or was all seen)."""

        def __init__(self, unseen: bool) -> None:
            super().__init__()
            self.unseen = unseen

    def __init__(
        self, engine: EngineAPI, *, limit: int = BUBBLE_LIMIT, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.limit = limit
        self.session: str | None = None
        self.model = ViewTranscript()
        self.widgets: dict[str, BubbleWidget] = {}
        self.more_before = False
        self.gap_after: int | None = None
        """While detached: the last row before the missing ones (all rows from the first
        mounted one up to it are mounted; after it, only the live turn and what came
        after it)."""
        self.live_turn: int | None = None
        self._busy: object | None = None
        """Held while the window changes (a page loads): one change at a time."""
        self._unseen = False
        self.prompts: dict[str, PermissionPrompt] = {}
        """Pending permission requests of this session, shown after its bubbles."""

    # -- what is mounted ---------------------------------------------------------------------

    def mounted_seqs(self) -> list[int]:
        """The seqs of the mounted bubbles, in order."""
        return [bubble.seq for bubble in self.model]

    @property
    def detached(self) -> bool:
        """True when rows are missing below the window (the user read far up)."""
        return self.gap_after is not None

    @property
    def _loading(self) -> bool:
        return self._busy is not None

    @property
    def at_bottom(self) -> bool:
        """True when the last line is in view (or there is nothing to scroll)."""
        return self.scroll_y >= self.max_scroll_y - 1

    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom: anchored, and the user has not
        scrolled away (Textual releases the anchor when they do)."""
        return self.is_anchored and not getattr(self, "_anchor_released", False)

    def allow_focus_children(self) -> bool:
        """Tab goes past the transcript in one step: its bubbles are reached with Up and
        Down once it has the focus (or with a click), not one Tab each."""
        return False

    def _set_unseen(self, unseen: bool) -> None:
        if unseen != self._unseen:
            self._unseen = unseen
            self.post_message(self.Unseen(unseen))

    def _pinned(self) -> frozenset[int]:
        """The seqs of the live turn's rows: never evicted."""
        if self.live_turn is None:
            return frozenset()
        return frozenset(b.seq for b in self.model if b.turn == self.live_turn)

    async def _mount_in_order(self, bubbles: Sequence[Bubble]) -> None:
        """Mount new bubbles where their seqs put them among the mounted ones (before the
        pending questions, which stay last)."""
        order = list(self.widgets.values())
        seqs = [widget.seq for widget in order]
        runs: list[tuple[Widget | None, list[BubbleWidget]]] = []
        for bubble in sorted(bubbles, key=lambda b: b.seq):
            if bubble.key in self.widgets:
                continue
            index = bisect_right(seqs, bubble.seq)
            before: Widget | None = order[index] if index < len(order) else None
            widget = make_bubble(bubble)
            self.widgets[widget.key] = widget
            if runs and runs[-1][0] is before:
                runs[-1][1].append(widget)
            else:
                runs.append((before, [widget]))
        for before, widgets in runs:
            target = before if before is not None else next(iter(self.prompts.values()), None)
            if target is not None:
                await self.mount_all(widgets, before=target)
            else:
                await self.mount_all(widgets)
        if runs:
            self.widgets = {b.key: self.widgets[b.key] for b in self.model if b.key in self.widgets}

    async def _merge_rows(self, rows: Sequence[Row]) -> None:
        """Merge rows read from the store by key (the longer text wins, so a message
        straddling a page edge, or still streaming, stays one bubble) and mount the new
        ones in order."""
        fresh = [row.key for row in rows if row.key not in self.model]
        self.model.merge_page(rows)
        for row in rows:
            widget = self.widgets.get(row.key)
            bubble = self.model.get(row.key)
            if (
                widget is not None
                and bubble is not None
                and (widget.text != bubble.text or widget.payload != bubble.payload)
            ):
                widget.refresh_from(bubble)
        await self._mount_in_order([b for b in map(self.model.get, fresh) if b is not None])

    async def _unmount(self, keys: Iterable[str]) -> None:
        gone = [self.widgets.pop(key) for key in list(keys) if key in self.widgets]
        self.model.drop(widget.key for widget in gone)
        if not gone:
            return
        if self.screen.focused in gone:
            # now, not with `focus()` (it waits): a focused widget removed hands the focus
            # to its first sibling, and the screen scrolls to it
            self.screen.set_focus(self, scroll_visible=False)
        await self.remove_children(gone)
        release(gone)

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
        for widget in [*self.widgets.values(), *self.prompts.values()]:
            region = widget.virtual_region
            if region.height and region.bottom > top and region.y < bottom:
                anchor.append((widget, region.y - top))
        return anchor

    def _restore(self, anchor: Anchor) -> None:
        """Put the first widget of `anchor` still mounted back where it was on screen."""
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
        if await self.wait_for_refresh():
            self._restore(anchor)
        else:  # called on the view's own task: it cannot wait for its own refresh
            self.call_after_refresh(self._restore, anchor)

    # -- changing the window, one change at a time ----------------------------------------

    def _claim(self) -> object | None:
        if self._busy is not None:
            return None
        self._busy = token = object()
        return token

    def _free(self, token: object) -> None:
        if self._busy is token:
            self._busy = None

    async def _run(self, token: object, change: Callable[[], Awaitable[None]]) -> None:
        try:
            await change()
        finally:
            self._free(token)
        self._check_edges()

    async def _locked(self, change: Callable[[], Awaitable[None]]) -> None:
        """Run `change` unless another one is running."""
        token = self._claim()
        if token is not None:
            await self._run(token, change)

    def _start(self, change: Callable[[], Awaitable[None]]) -> None:
        """Run `change` in a worker unless another one is running (claimed now, so no
        second one starts before the worker does)."""
        token = self._claim()
        if token is not None:
            self.run_worker(self._run(token, change), group="paging")

    # -- opening a session -------------------------------------------------------------------

    async def show_session(self, session: str) -> None:
        """Show `session` from its tail page in the store."""
        self.workers.cancel_group(self, "paging")  # a page of the session shown before
        self.session = session
        self.live_turn = None
        self._busy = token = object()
        try:
            await self._tail(fresh=True)
        finally:
            self._free(token)
        rows = list(self.model)
        if rows and self.engine.status(session) in (Status.WORKING, Status.WAITING):
            self.live_turn = rows[-1].turn

    async def _tail(self, fresh: bool) -> None:
        """Show the tail page. `fresh`: another session (nothing kept); else the live
        turn's bubbles that the page holds stay as they are (a live reply keeps
        streaming), the rest is read again."""
        session = self.session
        assert session is not None
        page = await self.engine.page(session)
        if session != self.session:
            return
        with self.app.batch_update():
            if fresh:
                self.model = ViewTranscript()
                old = list(self.widgets.values())
                self.widgets = {}
                self.prompts = {}
                await self.remove_children()
                release(old)
            else:
                first = page.rows[0].seq if page.rows else 0
                pinned = self._pinned()
                await self._unmount(
                    [b.key for b in self.model if b.seq not in pinned or b.seq < first]
                )
            await self._merge_rows(page.rows)
        self.more_before = page.has_more
        self.gap_after = None
        self._set_unseen(False)
        self.scroll_end(animate=False, immediate=True)
        self.anchor()

    async def _to_end(self) -> None:
        if self.detached:
            await self._tail(fresh=False)
        else:
            self.scroll_end(animate=False)
            self.anchor()
        self._set_unseen(False)

    async def jump_to_end(self) -> None:
        """Back to the newest output (reloading the tail when the window had detached)."""
        if self.session is not None:
            await self._locked(self._to_end)

    async def _head(self) -> None:
        session = self.session
        if session is None:
            return
        if self.more_before:
            page = await self.engine.rows_after(session, 0)
            if session != self.session:
                return
            pinned = self._pinned()
            with self.app.batch_update():
                await self._unmount([b.key for b in self.model if b.seq not in pinned])
                await self._merge_rows(page.rows)
            self.more_before = False
            self.gap_after = page.rows[-1].seq if page.has_more and page.rows else None
            if self.detached:
                self.anchor(False)
        self.scroll_home(animate=False, immediate=True)

    async def jump_to_start(self) -> None:
        """To the first message of the session (its first page, read from the store; the
        live turn stays pinned)."""
        await self._locked(self._head)

    async def action_jump_start(self) -> None:
        await self.jump_to_start()

    async def action_jump_end(self) -> None:
        await self.jump_to_end()

    # -- permission requests -----------------------------------------------------------------

    async def show_permissions(
        self, first: PermissionRequest | None, waiting: int = 0
    ) -> PermissionPrompt | None:
        """Show the session's oldest pending request (`first`; None when nothing waits) as
        its one prompt, which says how many wait in all (`waiting`): a thousand requests
        cost one widget, not a thousand, and answering the one shown brings the next.
        Returns the prompt when it is new (another request than the one shown before)."""
        shown = next(iter(self.prompts.values()), None)
        if shown is not None and first is not None and shown.request.id == first.id:
            shown.show_waiting(waiting)
            return None
        if shown is not None:
            self.prompts = {}
            await shown.remove()
        if first is None:
            return None
        added = self.prompts[first.id] = PermissionPrompt(first, waiting)
        await self.mount(added)
        if self.following or self.at_bottom:
            self.scroll_end(animate=False)
        return added

    # -- live frames -------------------------------------------------------------------------

    def _takes(self, frame: Frame, last: int) -> bool:
        """Whether a frame for a row the view does not hold belongs in the window."""
        if frame.seq <= last:
            return False  # an evicted row: it is in the store for later
        if not self.detached:
            return True
        # Reading far up: the live turn stays pinned, and a new prompt starts one; the
        # rest waits in the store until the user comes back down.
        return frame.kind == "user" or frame.turn == self.live_turn

    async def apply_frames(self, frames: Sequence[Frame]) -> None:
        """Fold frames of this session into the bubbles on screen.

        A live reply takes exactly the text the fold reports appended (its pieces joined
        once per call), never the whole text read back and compared: that made each frame
        cost as much as the reply so far, and a long reply the square of its length."""
        new: list[Bubble] = []
        live: dict[str, list[str]] = {}
        skipped = False
        last = self.mounted_seqs()[-1] if len(self.model) else 0
        for frame in frames:
            if frame.key not in self.model and not self._takes(frame, last):
                skipped = True
                continue
            change = self.model.fold(frame)
            if change is None:
                continue
            bubble, appended = change
            if bubble.stale:
                row = await self.engine.row(frame.session, frame.key)
                if row is not None:
                    bubble, appended = self.model.reread(row)
            if frame.kind == "user":
                self.live_turn = frame.turn
            widget = self.widgets.get(frame.key)
            if widget is None:
                if bubble not in new:
                    new.append(bubble)
                last = max(last, frame.seq)
            elif isinstance(widget, AgentBubble) and widget.live and appended is not None:
                if appended:
                    live.setdefault(frame.key, []).append(appended)
            else:
                live.pop(frame.key, None)  # the widget now shows all the bubble holds
                widget.refresh_from(bubble)
        for key, parts in live.items():
            widget = self.widgets[key]
            assert isinstance(widget, AgentBubble)
            await widget.append("".join(parts))
        if new:
            await self._append_new(new)
        if not self.following and not self.at_bottom and (new or live or skipped):
            self._set_unseen(True)

    async def _append_new(self, bubbles: list[Bubble]) -> None:
        """Mount rows that appeared; the newest agent reply streams live, earlier live
        replies are finished. Cockpit's own rows (a notice, a decision) leave the reply that
        streams live: it goes on after them."""
        widgets: list[BubbleWidget] = []
        for bubble in bubbles:
            widget = make_bubble(bubble, live=bubble.kind == "agent")
            self.widgets[widget.key] = widget
            widgets.append(widget)
        stream = [b.key for b in bubbles if b.kind not in NOTE_KINDS]
        if stream:
            await self.finish_live(except_key=stream[-1])
        first_prompt = next(iter(self.prompts.values()), None)
        if first_prompt is not None:
            await self.mount_all(widgets, before=first_prompt)
        else:
            await self.mount_all(widgets)
        if not self._loading:  # a page being loaded bounds the window itself
            await self._bound(keep_bottom=self.following or self.at_bottom, keep_place=True)

    async def finish_live(self, except_key: str | None = None) -> None:
        """Turn finished replies into cheap widgets (the turn ended, or a new row began)."""
        if except_key is None:
            self.live_turn = None
        for key, widget in list(self.widgets.items()):
            if key != except_key and isinstance(widget, AgentBubble) and widget.live:
                await widget.finish()

    async def _bound(self, keep_bottom: bool, keep_place: bool = False, room: int = 0) -> None:
        """Evict what is beyond the limit: the oldest near the bottom, the newest reading
        far up (the window then detaches); never the live turn. `keep_place`: put what is
        in view back where it was (a caller loading a page does that itself). `room`: make
        room for that many more first (a page about to be mounted), so the window never
        holds much more than the limit, even for a moment."""
        mounted = self.mounted_seqs()
        eviction = evict(mounted, self._pinned(), max(self.limit - room, 0), keep_bottom)
        if not eviction.seqs:
            return
        doomed = set(eviction.seqs)
        anchor = self._anchor() if keep_place and not self.following else []
        boundary = max((s for s in mounted if s < min(doomed)), default=None)
        await self._unmount([b.key for b in self.model if b.seq in doomed])
        if eviction.from_top:
            self.more_before = True
        else:
            if boundary is None:  # nothing older is left: only the live turn
                self.more_before = True
            elif self.gap_after is None or boundary < self.gap_after:
                self.gap_after = boundary
            self.anchor(False)
        seqs = self.mounted_seqs()
        if self.gap_after is not None and seqs and self.gap_after < seqs[0]:
            self.gap_after = seqs[0]  # the rows before it come back as an earlier page
        if anchor:
            self.call_after_refresh(self._restore, anchor)

    # -- paging while scrolling --------------------------------------------------------------

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._check_edges()

    def _gap_in_view(self) -> bool:
        """True when the last row before the missing ones is (nearly) in view."""
        if self.gap_after is None:
            return False
        seqs = self.mounted_seqs()
        index = bisect_right(seqs, self.gap_after) - 1
        if index < 0 or index == len(seqs) - 1:
            return self.at_bottom
        widget = self.widgets.get(list(self.model)[index].key)
        if widget is None:
            return False
        region = widget.virtual_region
        return bool(region.height) and region.bottom <= self._view_lines()[1] + EDGE

    def _check_edges(self) -> None:
        """Load the next page when the view is at an edge of the window: the top with
        earlier rows in the store, or the place where later rows are missing. Run after
        every scroll and every load, so a view that a load left at an edge (or a key that
        could not scroll any further) loads again instead of sticking."""
        if self._loading or self.session is None or not self.is_attached:
            return
        if self.more_before and self.scroll_y <= EDGE:
            self._start(self._earlier)
        elif self.detached and self._gap_in_view():
            self._start(self._later)
        elif self.detached and self.at_bottom:  # past the missing rows, at the live turn
            self._start(self._to_end)
        elif self.at_bottom and not self.detached:
            self._set_unseen(False)
            if not self.is_anchored:
                self.anchor()

    async def load_earlier(self) -> None:
        """Load the page before the first mounted bubble, merged by key, at the top; the
        bubbles in view stay where they are on screen."""
        await self._locked(self._earlier)

    async def _earlier(self) -> None:
        session = self.session
        if session is None or not self.more_before:
            return
        first = self.mounted_seqs()[0] if len(self.model) else None
        page = await self.engine.page(session, first)
        if session != self.session:
            return
        anchor = await self._take_page(page.rows, keep_bottom=False)
        self.more_before = page.has_more
        await self._bound(keep_bottom=False)
        await self._settle(anchor)

    async def _take_page(self, rows: Sequence[Row], keep_bottom: bool) -> Anchor:
        """Make room for a page's new rows (evicting at the far end), then merge them in;
        returns what was in view before, for `_settle` to put back."""
        anchor = self._anchor()
        fresh = sum(row.key not in self.model for row in rows)
        await self._bound(keep_bottom=keep_bottom, room=min(fresh, self.limit - len(anchor)))
        await self._merge_rows(rows)
        return anchor

    async def load_later(self) -> None:
        """Load the rows missing after `gap_after` (the window had detached), merged by
        key; the bubbles in view stay where they are on screen."""
        await self._locked(self._later)

    async def _later(self) -> None:
        session = self.session
        if session is None or self.gap_after is None:
            return
        page = await self.engine.rows_after(session, self.gap_after)
        if session != self.session:
            return
        anchor = await self._take_page(page.rows, keep_bottom=True)
        self.gap_after = page.rows[-1].seq if page.has_more and page.rows else None
        await self._bound(keep_bottom=True)
        await self._settle(anchor)

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

    def _items(self) -> list[Widget]:
        """What Up and Down move between: the bubbles, then the pending questions."""
        return [*self.widgets.values(), *self.prompts.values()]

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
        height = bottom - top
        focused = self.screen.focused
        if focused is not None and focused in items:
            region = focused.virtual_region
            if direction > 0 and region.bottom > bottom:
                self._scroll_within(min(top + max(height // 2, 1), region.bottom - height))
                return
            if direction < 0 and region.y < top:
                self._scroll_within(max(top - max(height // 2, 1), region.y))
                return
            index = items.index(focused) + direction
        else:
            regions = [item.virtual_region for item in items]
            if direction > 0:
                starts = [i for i, r in enumerate(regions) if top <= r.y < bottom]
                index = (
                    starts[0]
                    if starts
                    else next((i for i, r in enumerate(regions) if r.bottom > top), len(items) - 1)
                )
            else:
                ends = [i for i, r in enumerate(regions) if top < r.bottom <= bottom]
                index = (
                    ends[-1]
                    if ends
                    else next((i for i in reversed(range(len(items))) if regions[i].y < bottom), 0)
                )
        if not 0 <= index < len(items):
            # Past the first or the last bubble mounted: to that edge, where the next
            # page loads (the focused bubble stays in place on screen).
            self._scroll_within(0 if direction < 0 else self.max_scroll_y)
            self._check_edges()
            return
        target = items[index]
        self._reveal(target, direction)
        target.focus(scroll_visible=False)

    def _scroll_within(self, y: float) -> None:
        self.scroll_to(y=y, animate=False, immediate=True)

    def _reveal(self, widget: Widget, direction: int) -> None:
        """Scroll `widget` into view: all of it when it fits, else its first lines going
        down and its last lines going up."""
        region = widget.virtual_region
        top, bottom = self._view_lines()
        height = bottom - top
        target = top
        if region.height <= height:
            if region.y < top:
                target = region.y
            elif region.bottom > bottom:
                target = region.bottom - height
        elif direction > 0:
            if not top <= region.y < bottom:
                target = region.y
        elif not top < region.bottom <= bottom:
            target = region.bottom - height
        if target != top:
            self._scroll_within(target)
