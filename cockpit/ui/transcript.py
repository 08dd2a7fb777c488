"""The transcript of the session on screen: a bounded window of bubbles over its rows.

It opens on the tail page from the store (no agent needed), loads earlier pages as the
user scrolls up and merges them by key, evicts far-away bubbles so the number mounted
stays bounded, and folds live frames through the pure `ViewTranscript` (length guard by
`n`, reads replace). Reading far up detaches the window from the tail; new output is then
announced, and jumping back reloads the tail.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.containers import VerticalScroll
from textual.message import Message

from cockpit.engine import Engine
from cockpit.events import PermissionRequest
from cockpit.ui.bubbles import AgentBubble, BubbleWidget, make_bubble
from cockpit.ui.permission import PermissionPrompt
from cockpit.viewmodel import evict
from store import Bubble, Frame, Row, ViewTranscript

BUBBLE_LIMIT = 150
"""Most bubbles mounted at once, whatever the transcript's length."""

EDGE = 2
"""Lines from the top (or bottom) at which the next page loads."""


class TranscriptView(VerticalScroll):
    """The bubbles of one session."""

    class Unseen(Message):
        """New output arrived below what the user is reading (or was all seen)."""

        def __init__(self, unseen: bool) -> None:
            super().__init__()
            self.unseen = unseen

    def __init__(self, engine: Engine, *, limit: int = BUBBLE_LIMIT, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.limit = limit
        self.session: str | None = None
        self.model = ViewTranscript()
        self.widgets: dict[str, BubbleWidget] = {}
        self.more_before = False
        self.detached = False
        self.live_turn: int | None = None
        self._loading = False
        self._unseen = False
        self.prompts: dict[str, PermissionPrompt] = {}
        """Pending permission requests of this session, shown after its bubbles."""

    # -- what is mounted ---------------------------------------------------------------------

    def mounted_seqs(self) -> list[int]:
        """The seqs of the mounted bubbles, in order."""
        return [bubble.seq for bubble in self.model]

    @property
    def at_bottom(self) -> bool:
        """True when the last line is in view (or there is nothing to scroll)."""
        return self.scroll_y >= self.max_scroll_y - 1

    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom: anchored, and the user has not
        scrolled away (Textual releases the anchor when they do)."""
        return self.is_anchored and not getattr(self, "_anchor_released", False)

    def _set_unseen(self, unseen: bool) -> None:
        if unseen != self._unseen:
            self._unseen = unseen
            self.post_message(self.Unseen(unseen))

    async def _mount_rows(
        self, bubbles: Sequence[Bubble], *, before: BubbleWidget | None = None
    ) -> None:
        widgets = [make_bubble(bubble) for bubble in bubbles if bubble.key not in self.widgets]
        if not widgets:
            return
        for widget in widgets:
            self.widgets[widget.key] = widget
        if before is not None:
            await self.mount_all(widgets, before=before)
        else:
            await self.mount_all(widgets)

    async def _unmount(self, keys: Iterable[str]) -> None:
        gone = [self.widgets.pop(key) for key in list(keys) if key in self.widgets]
        self.model.drop(widget.key for widget in gone)
        if gone:
            await self.remove_children(gone)

    # -- opening a session -------------------------------------------------------------------

    async def show_session(self, session: str) -> None:
        """Show `session` from its tail page in the store."""
        self.session = session
        await self._load_tail()

    async def _load_tail(self) -> None:
        assert self.session is not None
        page = await self.engine.page(self.session)
        self.model = ViewTranscript()
        self.model.read(page.rows)
        self.widgets = {}
        self.prompts = {}
        self.live_turn = None
        with self.app.batch_update():
            await self.remove_children()
            await self._mount_rows(list(self.model))
        self.more_before = page.has_more
        self.detached = False
        self._set_unseen(False)
        self.scroll_end(animate=False, immediate=True)
        self.anchor()

    async def jump_to_end(self) -> None:
        """Back to the newest output (reloading the tail when the window had detached)."""
        if self.session is None:
            return
        if self.detached:
            await self._load_tail()
        else:
            self.scroll_end(animate=False)
            self.anchor()
        self._set_unseen(False)

    # -- permission requests -----------------------------------------------------------------

    async def show_permissions(
        self, requests: Sequence[PermissionRequest]
    ) -> PermissionPrompt | None:
        """Show these pending requests (and no others); returns the newest one added."""
        wanted = {request.id for request in requests}
        for request_id in [r for r in self.prompts if r not in wanted]:
            await self.prompts.pop(request_id).remove()
        added = None
        for request in requests:
            if request.id not in self.prompts:
                added = self.prompts[request.id] = PermissionPrompt(request)
                await self.mount(added)
        if added is not None and (self.following or self.at_bottom):
            self.scroll_end(animate=False)
        return added

    # -- live frames -------------------------------------------------------------------------

    async def apply_frames(self, frames: Sequence[Frame]) -> None:
        """Fold frames of this session into the bubbles on screen."""
        new: list[Bubble] = []
        live: dict[str, str] = {}
        last = self.mounted_seqs()[-1] if len(self.model) else 0
        for frame in frames:
            if frame.key not in self.model and (self.detached or frame.seq <= last):
                continue  # a row outside the window: it is in the store for later
            held = self.model.get(frame.key)
            before = held.text if held is not None else None
            bubble = self.model.apply(frame)
            if bubble is None:
                continue
            if bubble.stale:
                row = await self.engine.store.row(frame.session, frame.key)
                if row is not None:
                    self.model.read([row])
            if frame.kind == "user":
                self.live_turn = frame.turn
            widget = self.widgets.get(frame.key)
            if widget is None:
                if bubble not in new:
                    new.append(bubble)
                last = max(last, frame.seq)
            elif (
                isinstance(widget, AgentBubble)
                and widget.live
                and before is not None
                and bubble.text.startswith(before)
            ):
                live[frame.key] = live.get(frame.key, "") + bubble.text[len(before) :]
            else:
                widget.refresh_from(bubble)
        for key, text in live.items():
            widget = self.widgets[key]
            assert isinstance(widget, AgentBubble)
            await widget.append(text)
        if new:
            await self._append_new(new)
        if not self.following and not self.at_bottom and (new or live):
            self._set_unseen(True)

    async def _append_new(self, bubbles: list[Bubble]) -> None:
        """Mount rows that appeared; the newest agent reply streams live, earlier live
        replies are finished."""
        widgets: list[BubbleWidget] = []
        for bubble in bubbles:
            widget = make_bubble(bubble, live=bubble.kind == "agent")
            self.widgets[widget.key] = widget
            widgets.append(widget)
        await self.finish_live(except_key=widgets[-1].key)
        first_prompt = next(iter(self.prompts.values()), None)
        if first_prompt is not None:
            await self.mount_all(widgets, before=first_prompt)
        else:
            await self.mount_all(widgets)
        await self._bound(keep_bottom=self.following or self.at_bottom)

    async def finish_live(self, except_key: str | None = None) -> None:
        """Turn finished replies into cheap widgets (the turn ended, or a new row began)."""
        for key, widget in list(self.widgets.items()):
            if key != except_key and isinstance(widget, AgentBubble) and widget.live:
                await widget.finish()

    async def _bound(self, keep_bottom: bool) -> None:
        pinned = frozenset(
            b.seq for b in self.model if self.live_turn is not None and b.turn == self.live_turn
        )
        eviction = evict(
            self.mounted_seqs(), pinned if keep_bottom else frozenset(), self.limit, keep_bottom
        )
        if not eviction.seqs:
            return
        doomed = set(eviction.seqs)
        keys = [b.key for b in self.model if b.seq in doomed]
        if eviction.from_top:
            height = self.virtual_size.height
            await self._unmount(keys)
            self.more_before = True
            if not keep_bottom:
                self.call_after_refresh(self._keep_offset, height)
        else:
            await self._unmount(keys)
            self.detached = True

    def _keep_offset(self, old_height: int) -> None:
        """After content above the viewport changed height, keep the same lines in view."""
        delta = self.virtual_size.height - old_height
        if delta:
            self.scroll_to(y=max(self.scroll_y + delta, 0), animate=False, immediate=True)

    # -- paging while scrolling --------------------------------------------------------------

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self._loading or self.session is None:
            return
        if new <= EDGE and self.more_before and new < old + 1:
            self.run_worker(self.load_earlier(), group="paging", exclusive=True)
        elif self.at_bottom:
            if self.detached:
                self.run_worker(self.load_later(), group="paging", exclusive=True)
            else:
                self._set_unseen(False)

    async def load_earlier(self) -> None:
        """Load the page before the first mounted bubble, merged by key, at the top."""
        if self._loading or self.session is None or not self.more_before:
            return
        self._loading = True
        try:
            first = self.mounted_seqs()[0] if len(self.model) else None
            page = await self.engine.page(self.session, first)
            await self._prepend(page.rows)
            self.more_before = page.has_more
            await self._bound(keep_bottom=False)
        finally:
            self._loading = False

    async def _prepend(self, rows: Sequence[Row]) -> None:
        fresh = [row for row in rows if row.key not in self.model]
        self.model.merge_page(rows)
        for row in rows:
            widget = self.widgets.get(row.key)
            bubble = self.model.get(row.key)
            if widget is not None and bubble is not None:
                widget.refresh_from(bubble)
        if not fresh:
            return
        height = self.virtual_size.height
        first = next(iter(self.widgets.values()), None)
        bubbles = [b for b in (self.model.get(row.key) for row in fresh) if b is not None]
        await self._mount_rows(bubbles, before=first)
        self.widgets = {b.key: self.widgets[b.key] for b in self.model if b.key in self.widgets}
        self.call_after_refresh(self._keep_offset, height)

    async def load_later(self) -> None:
        """Load the rows after the last mounted bubble (the window had detached)."""
        if self._loading or self.session is None or not self.detached:
            return
        self._loading = True
        try:
            last = self.mounted_seqs()[-1] if len(self.model) else 0
            page = await self.engine.rows_after(self.session, last)
            self.model.merge_page(page.rows)
            await self._mount_rows([b for b in self.model if b.seq > last])
            self.detached = page.has_more
            await self._bound(keep_bottom=True)
        finally:
            self._loading = False
