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
sticks at a page boundary and never jumps by a page (keeping the place, and the keys that
move between bubbles, are `BubbleScroll`'s; the pure rules, `cockpit.ui.transcript_rules`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget

from cockpit.api import EngineAPI, PermissionRequest, Status
from cockpit.compat.textual_private import anchor_released, release_style_caches
from cockpit.ui.bubble_kinds import make_bubble
from cockpit.ui.bubble_scroll import Anchor, BubbleScroll
from cockpit.ui.bubbles import AgentBubble, BubbleWidget
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.transcript_rules import after_eviction, pinned_seqs, takes_frame
from cockpit.ui.transcript_window import evict
from store import ASIDE_KINDS, Bubble, Frame, Row, ViewTranscript

BUBBLE_LIMIT = 150
"""Most bubbles mounted at once, whatever the transcript's length (plus the live turn)."""

EDGE = 2
"""Lines from the top (or from the missing rows below) at which the next page loads."""


class TranscriptView(BubbleScroll):
    """The bubbles of one session."""

    # The left edge is the bubbles' own: each keeps its first column for the focus bar.
    # Its height is the app's layout (themes/cockpit.tcss).
    DEFAULT_CSS = """
    TranscriptView {
        padding: 0 1 0 0;
        scrollbar-size-vertical: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("home,ctrl+home", "jump_start", "First message", show=False),
        Binding("end", "jump_end", "Newest", show=False),
    ]

    class Unseen(Message):
        """New output arrived below what the user is reading (or was all seen)."""

        def __init__(self, unseen: bool) -> None:
            super().__init__()
            self.unseen = unseen

    class Blank(Message):
        """The session on screen has no message yet (or has one now): its space shows a
        welcome until then."""

        def __init__(self, session: str | None, blank: bool) -> None:
            super().__init__()
            self.session = session
            self.blank = blank

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
        self._blank: tuple[str | None, bool] | None = None
        self._follow_wanted = False
        """The user sent a prompt while the window was changing: back to the newest
        output once the change is done."""
        self.prompts: dict[str, PermissionPrompt | FormPrompt] = {}
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
        return self.is_anchored and not anchor_released(self)

    def allow_focus_children(self) -> bool:
        """Tab goes past the transcript in one step: its bubbles are reached with Up and
        Down once it has the focus (or with a click), not one Tab each."""
        return False

    def _set_unseen(self, unseen: bool) -> None:
        if unseen != self._unseen:
            self._unseen = unseen
            self.post_message(self.Unseen(unseen))

    def _say_blank(self) -> None:
        """Tell the app whether the session shown has no message (said once per change)."""
        blank = (self.session, self.session is not None and not self.model and not self.more_before)
        if blank != self._blank:
            self._blank = blank
            self.post_message(self.Blank(*blank))

    def _pinned(self) -> frozenset[int]:
        """The seqs of the live turn's rows: never evicted."""
        return pinned_seqs(self.model, self.live_turn)

    def _items(self) -> list[Widget]:
        """What Up and Down move between: the bubbles, then the pending questions."""
        return [*self.widgets.values(), *self.prompts.values()]

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
        release_style_caches(gone)

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
        if self._follow_wanted:  # a prompt was sent meanwhile: its output comes first
            self._start(self._to_end)
            return
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
            # A partial, not a coroutine: a worker dropped before it starts makes none.
            work: Callable[[], object] = partial(self._run, token, change)
            self.run_worker(work, group="paging")

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
        self._follow_wanted = False  # the tail is on screen, followed
        self._say_blank()

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
                release_style_caches(old)
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
        self._follow_wanted = False
        if self.detached:
            await self._tail(fresh=False)
        else:
            self.scroll_end(animate=False)
            self.anchor()
        self._set_unseen(False)

    def follow_output(self) -> None:
        """The user sent a prompt: back to the newest output, which the view follows again,
        as every chat does (the prompt and what it brings are what they look at next). A
        page loading meanwhile (PageUp just before) finishes first."""
        if self.session is not None:
            self._follow_wanted = True
            self._start(self._to_end)

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
    ) -> PermissionPrompt | FormPrompt | None:
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
        added: PermissionPrompt | FormPrompt = (
            FormPrompt(first, waiting)
            if first.form is not None
            else PermissionPrompt(first, waiting)
        )
        self.prompts[first.id] = added
        await self.mount(added)
        if self.following or self.at_bottom:
            self.scroll_end(animate=False)
        return added

    # -- live frames -------------------------------------------------------------------------

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
            if frame.key not in self.model and not takes_frame(
                frame, last, self.detached, self.live_turn
            ):
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
        stream = [b.key for b in bubbles if b.kind not in ASIDE_KINDS]
        if stream:
            await self.finish_live(except_key=stream[-1])
        first_prompt = next(iter(self.prompts.values()), None)
        if first_prompt is not None:
            await self.mount_all(widgets, before=first_prompt)
        else:
            await self.mount_all(widgets)
        if not self._loading:  # a page being loaded bounds the window itself
            await self._bound(keep_bottom=self.following or self.at_bottom, keep_place=True)
        self._say_blank()

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
        self.more_before, self.gap_after = after_eviction(
            eviction.from_top, boundary, self.mounted_seqs(), self.more_before, self.gap_after
        )
        if not eviction.from_top:
            self.anchor(False)  # rows went below the view: it no longer follows the end
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
