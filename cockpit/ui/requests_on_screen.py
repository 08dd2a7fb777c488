"""The permission requests of the session on screen, shown inline in its transcript: the
oldest one pending, with the keyboard moved to it or on from it as the user would expect,
and the answer given to the engine."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App
from textual.message import Message

from cockpit.api import EngineAPI, PermissionEvent
from cockpit.ui.composer import Composer
from cockpit.ui.failures import reported
from cockpit.ui.form_prompt import FormPrompt
from cockpit.ui.held_keys import HeldKeys
from cockpit.ui.permission_prompt import PermissionPrompt
from cockpit.ui.screen_rules import focused_prompt
from cockpit.ui.transcript import TranscriptView


class RequestsOnScreen:
    """The pending request of the session on screen, and where the keyboard goes."""

    class PermissionsChanged(Message):
        """Requests of the session on screen were asked or answered: show its prompt again,
        once for however many came meanwhile (an agent may ask a thousand at once)."""

    def __init__(self, app: App[Any], engine: Callable[[], EngineAPI], keys: HeldKeys) -> None:
        self.app = app
        """For the transcript, the composer and the focus."""
        self._engine = engine
        self._keys = keys
        self._posted = False
        self._focus = False
        """A request was asked since the prompt was last shown: the keyboard may go to it."""
        self._left = False
        """The request answered since had the keyboard: it goes to the next one."""

    def focus_session(self) -> None:
        """Put the keyboard where the session on screen needs it: on its oldest pending
        request, else on the composer."""
        view = self.app.query_one_optional(TranscriptView)
        if view is None:  # the app is closing
            return
        prompts = list(view.prompts.values())
        if prompts:
            prompts[0].focus()
        else:
            self.app.query_one(Composer).focus()

    def follow(self, event: PermissionEvent) -> None:
        """A request of the session on screen was asked or answered: show it again soon
        (once for however many come)."""
        self._focus |= not event.resolved
        held = focused_prompt(self.app.focused)
        if event.resolved and held is not None and held.request.id == event.request.id:
            self._left = True
        if not self._posted:
            self._posted = True
            self.app.post_message(self.PermissionsChanged())

    @reported("show the request")
    async def changed(self) -> None:
        """Show the prompt again (`PermissionsChanged`)."""
        self._posted = False
        focus, self._focus = self._focus, False
        left, self._left = self._left, False
        if self.app.is_running:
            await self.show(focus=focus, left=left)

    async def show(self, focus: bool = False, left: bool = False) -> None:
        """Show the oldest pending request of the session on screen inline; put the keyboard
        on a new one when the user is not in the middle of writing a prompt, and on the next
        one when the request answered had it (`left`: it may have gone to the composer
        meanwhile)."""
        view = self.app.query_one_optional(TranscriptView)
        if view is None or view.session is None:
            return
        engine = self._engine()
        first = engine.first_pending(view.session)
        held = focused_prompt(view.screen.focused)
        leaving = held is not None and (first is None or first.id != held.request.id)
        if leaving:
            # Removed with the keyboard on it, Textual would hand the focus to the first
            # bubble beside it and scroll the transcript to the top: move it first, now
            # (`focus()` waits for the next idle, after the removal).
            view.screen.set_focus(self.app.query_one(Composer), scroll_visible=False)
        added = await view.show_permissions(first, engine.pending_count(view.session))
        if added is not None and focus and not self.app.query_one(Composer).text.strip():
            added.focus()
        elif (leaving or left) and view.prompts:
            # The next request waiting, oldest first. Only when the one that had the
            # keyboard went: with the same one still shown, the keyboard stays where the
            # user put it (an Esc to the composer, not applied yet, was undone here).
            self.focus_session()

    @reported("answer the request")
    async def answered(self, message: PermissionPrompt.Answered) -> None:
        """The user answered the request on screen: tell the engine."""
        request = message.request.id
        await self._tell(
            request, lambda: self._engine().answer_permission(request, message.option_id)
        )

    @reported("answer the form")
    async def form_answered(self, message: FormPrompt.Answered) -> None:
        """The user answered the form on screen: tell the engine. Values the engine refuses
        (the form changed its mind about nothing, but check anyway) are said in the form,
        which can be answered again."""
        request = message.request.id
        try:
            await self._tell(
                request,
                lambda: self._engine().answer_form(request, message.action, message.content),
            )
        except ValueError as problem:
            for prompt in self.app.query(FormPrompt):
                if prompt.request.id == request:
                    prompt.show_problem(str(problem))

    async def _tell(self, request: str, answer: Callable[[], Awaitable[None]]) -> None:
        """Give the engine the user's `answer` to `request`. The keys typed after it go to
        the composer, in order. When the engine fails, the request's prompt (a question's
        or a form's) can be answered again, and the failure goes on."""
        self._keys.hold_keys()
        try:
            with contextlib.suppress(KeyError):  # already answered (cancelled, or by policy)
                await answer()
        except Exception:
            for prompt in [*self.app.query(PermissionPrompt), *self.app.query(FormPrompt)]:
                if prompt.request.id == request:
                    prompt.answered = False
            raise
        finally:
            self.app.query_one(Composer).focus()
            self._keys.release_keys()
