"""The permission requests of the session on screen, shown inline in its transcript: the
oldest one pending, with the keyboard moved to it or on from it as the user would expect,
and the answer given to the engine."""

from __future__ import annotations

import contextlib

from textual import on
from textual.message import Message

from cockpit.ui.base import focused_prompt
from cockpit.ui.composer import Composer
from cockpit.ui.failures import reported
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.permission_prompt import PermissionPrompt


class PermissionsChanged(Message):
    """Requests of the session on screen were asked or answered: show its prompt again,
    once for however many came meanwhile (an agent may ask a thousand at once)."""


class RequestsOnScreen(HeldKeys):
    """The pending request of the session on screen, and where the keyboard goes."""

    @on(PermissionsChanged)
    @reported("show the request")
    async def _permissions_changed(self) -> None:
        self._permissions_posted = False
        focus, self._permissions_focus = self._permissions_focus, False
        left, self._permissions_left = self._permissions_left, False
        if self.is_running:
            await self._show_permissions(focus=focus, left=left)

    async def _show_permissions(self, focus: bool = False, left: bool = False) -> None:
        """Show the oldest pending request of the session on screen inline; put the keyboard
        on a new one when the user is not in the middle of writing a prompt, and on the next
        one when the request answered had it (`left`: it may have gone to the composer
        meanwhile)."""
        view = self._transcript()
        if view is None or view.session is None:
            return
        first = self.engine.first_pending(view.session)
        held = focused_prompt(view.screen.focused)
        leaving = held is not None and (first is None or first.id != held.request.id)
        if leaving:
            # Removed with the keyboard on it, Textual would hand the focus to the first
            # bubble beside it and scroll the transcript to the top: move it first, now
            # (`focus()` waits for the next idle, after the removal).
            view.screen.set_focus(self.query_one(Composer), scroll_visible=False)
        added = await view.show_permissions(first, self.engine.pending_count(view.session))
        if added is not None and focus and not self.query_one(Composer).text.strip():
            added.focus()
        elif (leaving or left) and view.prompts:
            # The next request waiting, oldest first. Only when the one that had the
            # keyboard went: with the same one still shown, the keyboard stays where the
            # user put it (an Esc to the composer, not applied yet, was undone here).
            self._focus_session()

    @reported("answer the request")
    async def on_permission_prompt_answered(self, message: PermissionPrompt.Answered) -> None:
        self.hold_keys()  # the keys typed after the answer go to the composer, in order
        try:
            with contextlib.suppress(KeyError):  # already answered (cancelled, or by policy)
                await self.engine.answer_permission(message.request.id, message.option_id)
        except Exception:  # not answered (the engine failed): it can be answered again
            for prompt in self.query(PermissionPrompt):
                if prompt.request.id == message.request.id:
                    prompt.answered = False
            raise
        finally:
            self.query_one(Composer).focus()
            self.release_keys()

    def on_permission_prompt_key_after_answer(
        self, message: PermissionPrompt.KeyAfterAnswer
    ) -> None:
        self.hold_ahead(message.key, message.character)
