"""What the user wrote and has not sent, kept per session, and the session Cockpit opens on
next time: both saved a little after the last change, so typing and walking the rail cost
no writes, and a crash loses at most a second or two. A draft past the bound the engine
keeps (`cockpit.bounds.DRAFT_BYTES`) stays on screen, is not saved, and the user is told
so once."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import TextArea

from cockpit.bounds import draft_refusal, draft_too_long
from cockpit.ui.base import CockpitBase
from cockpit.ui.composer import Composer

DRAFT_SAVE_DELAY = 1.0
"""Seconds after the last keystroke before a draft is saved."""

SESSION_SAVE_DELAY = 2.0
"""Seconds after a switch before the session to reopen on is saved."""


class Drafts(CockpitBase):
    """Each session's unsent draft in the composer, and the last session on screen."""

    def _take_draft(self, session: str) -> None:
        """Give the composer to `session` in its turn: after the keys already on their way
        to it (typed before the switch, in one burst with it), which stay in the draft
        of the session they were typed in; before the keys typed after it."""
        self.query_one(Composer).call_later(self._hand_over, session)

    def _hand_over(self, session: str) -> None:
        """What the composer holds is kept as the draft of the session it was written for,
        and `session`'s own draft comes back."""
        composer = self.query_one_optional(Composer)
        if composer is None:  # gone at shutdown
            return
        self._keep_draft()
        composer.show_draft(session, self._drafts.get(session, ""))

    def _keep_draft(self) -> None:
        """Remember the composer's text as its session's draft (saved soon)."""
        composer = self.query_one_optional(Composer)
        owner = composer.session if composer is not None else None
        if composer is None or owner not in self.records:  # none yet, gone, or deleted
            return
        text = composer.text
        if self._drafts.get(owner, "") == text:
            return
        self._drafts[owner] = text
        if draft_too_long(text):  # kept here, not saved: the stored draft stays as it was
            self._unsaved_drafts.discard(owner)
            if owner not in self._drafts_too_long:
                self._drafts_too_long.add(owner)
                self.notify(draft_refusal(text), severity="warning", timeout=8, markup=False)
            return
        self._drafts_too_long.discard(owner)
        self._unsaved_drafts.add(owner)
        if self._draft_timer is None:
            self._draft_timer = self.set_timer(DRAFT_SAVE_DELAY, self._on_draft_timer)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if isinstance(event.text_area, Composer):
            self._keep_draft()

    def _on_draft_timer(self) -> None:
        self._draft_timer = None
        self._save_drafts()

    def _save_drafts(self) -> None:
        """Keep the drafts that changed (the store writes them with its next flush, so a
        crash loses at most a second or so of typing)."""
        while self._unsaved_drafts:
            session = self._unsaved_drafts.pop()
            if session in self.records:
                self.engine.save_draft(session, self._drafts.get(session, ""))

    def _remember_session(self) -> None:
        """The session on screen is the one Cockpit opens on next time (saved soon)."""
        if self._settings.last_session != self.current:
            self._settings = replace(self._settings, last_session=self.current)
            if self._session_timer is None:
                self._session_timer = self.set_timer(SESSION_SAVE_DELAY, self._save_last_session)

    def _save_last_session(self) -> None:
        self._session_timer = None
        self.save_setting("last_session", self._settings.last_session, "the session on screen")
