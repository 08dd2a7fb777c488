"""The forms a session's agent asks the user to fill, or the links it asks them to open
(`elicitation/create`), held like its permission requests: listed in the session and the
inbox until answered, each answer a row committed before the agent hears it, secret
values masked in that row. Nothing answers a form but a person: no policy, no `--yes`.

A schema Cockpit cannot show is refused: the agent gets an "Invalid params" error that
says why, and the session a row. `elicitation/complete` (the agent saying a link's task
is done) closes its question, or is noted when it was answered already.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict, deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    CreateElicitationResponse,
    DeclineElicitationResponse,
)

from cockpit.api import Form, PermissionRequest
from cockpit.engine.errors import describe
from cockpit.engine.inbox import SessionInbox, received
from cockpit.engine.permission_rules import REFUSED
from cockpit.engine.questions import PendingRequest
from cockpit.form_rules import (
    ACTIONS,
    FormRefused,
    answer_text,
    masked,
    read_form,
    shown,
    validate,
)
from store import note

if TYPE_CHECKING:
    from cockpit.engine.permission_broker import PermissionBroker, SessionState

log = logging.getLogger(__name__)

LINKS_KEPT = 64
"""Links answered whose `elicitation/complete` may still come, kept to note it."""


class FormQuestions:
    """The forms of one session: asked, answered, completed."""

    def __init__(
        self,
        broker: PermissionBroker,
        session_id: str,
        inbox: SessionInbox,
        session: SessionState,
    ) -> None:
        self._broker = broker
        self.session_id = session_id
        self._inbox = inbox
        self._session = session
        self._answered_links: OrderedDict[str, Form] = OrderedDict()
        """Links answered, by the agent's id, whose completion may still come."""
        self._arrived: deque[Any] = deque()
        """The JSON-RPC ids of the forms the transport saw, in arrival order, not yet
        asked: the SDK hands each to `ask` in that order, without its id."""
        self._by_request: dict[Any, PendingRequest] = {}
        """The forms waiting, by the agent's JSON-RPC id (its `$/cancel_request` names it)."""

    def arrived(self, request_id: Any) -> None:
        """The transport saw an `elicitation/create` with this id (it reaches `ask` next)."""
        self._arrived.append(request_id)

    def withdrawn(self, request_id: Any) -> PendingRequest | None:
        """The form the agent's request `request_id` asked, when it still waits."""
        return self._by_request.pop(request_id, None)

    async def ask(self, message: str, mode: Mapping[str, Any]) -> CreateElicitationResponse:
        """`elicitation/create`: show the form (or the link), and answer the agent with the
        user's answer once its row is stored."""
        request_id = self._arrived.popleft() if self._arrived else None
        try:
            form = read_form(message, mode)
        except FormRefused as refused:
            await self._broker.refused.tell(
                note(
                    self.session_id,
                    "permission",
                    f"Refused a form the agent asked ({refused}); it was answered with an error.",
                    decidedBy=REFUSED,
                    reason=str(refused),
                    **received({"message": message, **mode}),
                )
            )
            raise RequestError.invalid_params(
                {"details": f"Cockpit cannot show this form: {refused}"}
            ) from None
        tool_call_id = mode.get("toolCallId")
        title = form.title or shown(form.message, 120) or "a form"
        request = PermissionRequest(
            uuid.uuid4().hex[:10],
            self.session_id,
            {
                "toolCallId": tool_call_id
                if isinstance(tool_call_id, str)
                else f"form-{uuid.uuid4().hex[:8]}",
                "title": title,
                "kind": "link" if form.is_link else "form",
            },
            (),
            self._broker.now(),
            form=form,
        )
        pending = PendingRequest(request)
        if self._session.closing():
            await self.decide(pending, "cancel", None, "cancel")
        elif self._session.agent_gone():
            await self.decide(pending, "cancel", None, "exit", reason="the agent exited")
        else:
            self._broker.hold(pending)
            if request_id is not None:
                self._by_request[request_id] = pending
        try:
            result = await pending.answer
        finally:
            if request_id is not None and self._by_request.get(request_id) is pending:
                del self._by_request[request_id]
        action, content = result if isinstance(result, tuple) else ("cancel", None)
        if action == "accept":
            return AcceptElicitationResponse(action="accept", content=content)
        if action == "decline":
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")

    async def answer(
        self,
        request_id: str,
        action: str,
        values: Mapping[str, Any] | None = None,
        decided_by: str = "user",
    ) -> None:
        """The user's answer to a pending form: KeyError when none waits under that id,
        ValueError (FormValueError) saying why when the values do not fit it."""
        pending = self._broker.pending.get(request_id)
        if pending is None or pending.request.form is None:
            raise KeyError(f"no pending form {request_id!r}")
        if action not in ACTIONS:
            raise ValueError(f"a form is answered with one of {', '.join(ACTIONS)}")
        form = pending.request.form
        content = validate(form, values or {}) if action == "accept" and not form.is_link else None
        await self.decide(pending, action, content, decided_by)

    async def decide(
        self,
        pending: PendingRequest,
        action: str,
        content: dict[str, Any] | None,
        decided_by: str,
        *,
        reason: str | None = None,
    ) -> None:
        """Write the answer's row (secrets masked), THEN answer the agent."""
        if pending.answer.done() or pending.deciding:
            return
        pending.deciding = True
        request = pending.request
        form = request.form
        assert form is not None
        text = answer_text(form, action, content or {}, decided_by)
        if reason:
            text = f"{text[:-1] if text.endswith('.') else text} ({reason})."
        row = note(
            self.session_id,
            "permission",
            text,
            toolCallId=request.tool_call_id,
            decidedBy=decided_by,
            action=action,
            form={
                "message": form.message,
                "url": form.url or None,
                "fields": [field.name for field in form.fields],
            },
            values=masked(form, content) if content else None,
            **({"reason": reason} if reason else {}),
        )
        try:
            await self._inbox.record(row)
        except Exception as error:
            # Nothing the transcript does not hold may be sent: the agent hears "cancel".
            log.exception("could not record a form answer of session %s", self.session_id)
            action, content = "cancel", None
            await self._inbox.tell(
                note(
                    self.session_id,
                    "error",
                    f"Could not record the answer to {request.title} ({describe(error)}); the "
                    "agent was told it was cancelled.",
                )
            )
        if form.is_link and action == "accept" and form.elicitation_id:
            self._answered_links[form.elicitation_id] = form
            while len(self._answered_links) > LINKS_KEPT:
                self._answered_links.popitem(last=False)
        self._broker.settle(pending, (action, content), action)

    async def completed(self, elicitation_id: str) -> None:
        """`elicitation/complete`: the agent says the task behind a link is done. Its
        question, still waiting, is closed; one answered already gets a row saying so."""
        for pending in list(self._broker.pending.values()):
            form = pending.request.form
            if form is not None and form.elicitation_id == elicitation_id:
                await self.decide(
                    pending, "accept", None, "agent", reason="the agent says it is done"
                )
                return
        form = self._answered_links.pop(elicitation_id, None)
        if form is None:
            log.info("session %s: completion of an unknown elicitation", self.session_id)
            return
        await self._inbox.tell(
            note(self.session_id, "notice", f"The agent says the link {form.url} is done.")
        )
