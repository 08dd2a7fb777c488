"""What the user wrote and has not sent, kept per session: saved a little after the last
change, so typing costs no writes, and a crash loses at most a second or two. A draft past
the bound the engine keeps (`cockpit.bounds.DRAFT_BYTES`) stays on screen, is not saved,
and the user is told so once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.timer import Timer

from cockpit.api import EngineAPI
from cockpit.bounds import draft_refusal, draft_too_long
from cockpit.ui.composer import Composer
from store import SessionRecord

DRAFT_SAVE_DELAY = 1.0
"""Seconds after the last keystroke before a draft is saved."""


class Drafts:
    """Each session's unsent draft in the composer."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        records: Callable[[], dict[str, SessionRecord]],
    ) -> None:
        self.app = app
        """For the composer, notices and the save timer."""
        self._engine = engine
        self._records = records
        self._drafts: dict[str, str] = {}
        """What the user wrote for each session and has not sent."""
        self._unsaved: set[str] = set()
        self._too_long: set[str] = set()
        """The sessions whose draft is past the bound (kept on screen, not saved; the user
        was told once)."""
        self._timer: Timer | None = None
        self._closed = False
        """The app is ending: what is stored stays as the keys before the end made it."""

    def load(self, records: dict[str, SessionRecord]) -> None:
        """The drafts as the store kept them."""
        self._drafts = {r.id: r.draft for r in records.values() if r.draft}

    def get(self, session: str) -> str:
        """The draft of `session` ("" when none)."""
        return self._drafts.get(session, "")

    def forget(self, session: str) -> None:
        """`session` was deleted."""
        self._drafts.pop(session, None)

    def take(self, session: str) -> None:
        """Give the composer to `session` in its turn: after the keys already on their way
        to it (typed before the switch, in one burst with it), which stay in the draft
        of the session they were typed in; before the keys typed after it."""
        self.app.query_one(Composer).call_later(self._hand_over, session)

    def _hand_over(self, session: str) -> None:
        """What the composer holds is kept as the draft of the session it was written for,
        and `session`'s own draft comes back."""
        composer = self.app.query_one_optional(Composer)
        if composer is None:  # gone at shutdown
            return
        self.keep()
        composer.show_draft(session, self._drafts.get(session, ""))

    def close(self, then: Callable[[], object]) -> None:
        """The app ends (Ctrl+Q, a second Ctrl+C): keep and save the draft as the keys
        typed before it left it, then `then` (the app exits). Ctrl+Q runs as it arrives,
        before the letters (or the Ctrl+U) typed ahead of it in one burst reach the
        composer, so this waits for the composer's turn, after them. Nothing typed later
        (the rest of the burst) changes what is stored."""
        composer = self.app.query_one_optional(Composer)
        if composer is None:  # not there yet: nothing typed
            self._last_save(then)
        else:
            composer.call_later(self._last_save, then)

    def _last_save(self, then: Callable[[], object]) -> None:
        self.keep()
        self.save()
        self._closed = True
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        then()

    def keep(self) -> None:
        """Remember the composer's text as its session's draft (saved soon)."""
        composer = self.app.query_one_optional(Composer)
        owner = composer.session if composer is not None else None
        if self._closed or composer is None or owner not in self._records():
            return  # ending, no composer yet, none shown, or deleted
        text = composer.text
        if self._drafts.get(owner, "") == text:
            return
        self._drafts[owner] = text
        if draft_too_long(text):  # kept here, not saved: the stored draft stays as it was
            self._unsaved.discard(owner)
            if owner not in self._too_long:
                self._too_long.add(owner)
                self.app.notify(draft_refusal(text), severity="warning", timeout=8, markup=False)
            return
        self._too_long.discard(owner)
        self._unsaved.add(owner)
        if self._timer is None:
            self._timer = self.app.set_timer(DRAFT_SAVE_DELAY, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.save()

    def save(self) -> None:
        """Keep the drafts that changed (the store writes them with its next flush, so a
        crash loses at most a second or so of typing)."""
        if self._closed:
            return
        while self._unsaved:
            session = self._unsaved.pop()
            if session in self._records():
                self._engine().save_draft(session, self._drafts.get(session, ""))
