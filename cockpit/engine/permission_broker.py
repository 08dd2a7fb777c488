"""A session's permission broker: the agent's requests waiting for an answer, and how each
is answered (a remembered "always", the caller's policy, Cockpit's permission rules, or
the user), with its decision row committed before the agent hears the answer.

Commands the agent wants run in a terminal go through the same rules: one it asked for
this turn, and was allowed, runs without a second question. The forms the agent asks
(`FormQuestions`) wait among its requests, in the order they came, and are closed with
them (a cancel, the agent's exit); no rule answers them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from cockpit.api import (
    EngineEvent,
    PermissionEvent,
    PermissionRequest,
    Status,
    option_of_kind,
    policy_choice,
)
from cockpit.engine.errors import describe
from cockpit.engine.form_questions import FormQuestions
from cockpit.engine.inbox import SessionInbox
from cockpit.engine.permission_rules import (
    REFUSED,
    UNANSWERED,
    ambiguity,
    decision_text,
    find_option,
    remembered_key,
)
from cockpit.engine.policy import Policy, decide
from cockpit.engine.questions import PendingRequest
from cockpit.engine.refusals import RefusedRequests
from cockpit.engine.terminals import command_lines
from cockpit.text.command_line import readable_command
from cockpit.text.textout import command_of
from store import note
from store.store import Store

log = logging.getLogger(__name__)

AutoAnswer = Callable[[PermissionRequest], str | None]
"""Given a request, the optionId to answer without asking, or None to ask the user."""


@dataclass(frozen=True)
class SessionState:
    """What the broker reads of the session it serves, and the one thing it changes there
    (its status): callbacks, so that the broker can be built and tested alone."""

    status: Callable[[], str]
    """The session's live status."""
    set_status: Callable[[str, str], None]
    """Change the session's live status (and its detail) and tell the clients."""
    closing: Callable[[], bool]
    """True while a cancel or a stop is under way: nothing more is asked."""
    agent_gone: Callable[[], bool]
    """True once the agent exited (or none runs): nobody would hear an answer."""


class PermissionBroker:
    """The permission requests of one session, and their answers."""

    def __init__(
        self,
        session_id: str,
        store: Store,
        emit: Callable[[EngineEvent], None],
        inbox: SessionInbox,
        root: Path,
        session: SessionState,
        *,
        auto_answer: AutoAnswer | None = None,
        policy: Callable[[], Policy] | None = None,
    ) -> None:
        self.session_id = session_id
        self._store = store
        self._emit = emit
        self._inbox = inbox
        self._root = root
        self._session = session
        self.auto_answer = auto_answer
        self.policy = policy or Policy
        """The global policy as it is now (`policy.toml` is read when a request comes)."""
        self.pending: dict[str, PendingRequest] = {}
        """Requests waiting for the user, by id, in the order they came (the oldest first)."""
        self._pending_by_tool: dict[str, dict[str, PendingRequest]] = {}
        """The same requests by the tool call they are about, so that the agent's cancel of
        one finds it without looking through all of them."""
        self._always: set[tuple[str, str]] = set()
        self._allowed_commands: list[str] = []
        """Command lines the agent asked to run and was allowed, this turn: its
        `terminal/create` for one of them needs no second question."""
        self._permission_ids: dict[Any, str] = {}
        """The tool call of each permission request, by the agent's JSON-RPC request id."""
        self._background: set[asyncio.Future[None]] = set()
        self.forms = FormQuestions(self, session_id, inbox, session)
        """The forms the agent asks the user to fill (`elicitation/create`)."""
        self.refused = RefusedRequests(session_id, inbox)
        """Every request of the agent's that is refused (a question with ambiguous options,
        one off ACP's schema, a file outside the root...), counted in its turn."""

    def now(self) -> float:
        """The store's clock, which dates every question."""
        return self._store.now()

    async def ask(
        self, tool_call: dict[str, Any], options: list[dict[str, Any]]
    ) -> RequestPermissionResponse:
        """A permission request: answered by a remembered "always", a policy, or the user."""
        request = PermissionRequest(
            uuid.uuid4().hex[:10], self.session_id, tool_call, tuple(options), self._store.now()
        )
        pending = PendingRequest(request)
        why = ambiguity(request.options)
        chosen = None
        if why is None and not self._session.closing():
            chosen = await self._automatic(request)
        if why is not None:
            await self._decide(pending, None, REFUSED, reason=why)
        elif self._session.closing():  # checked after the rules were read too:
            await self._decide(pending, None, "cancel")  # a cancel meanwhile closed the rest
        elif chosen is not None:
            await self._decide(pending, *chosen)
        elif self._session.agent_gone():
            await self._decide(pending, None, "exit", reason="the agent exited")
        else:
            self.hold(pending)
        option_id = await pending.answer
        if option_id is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option_id)
        )

    async def _automatic(self, request: PermissionRequest) -> tuple[str, str, str | None] | None:
        """An answer that needs no one: a remembered "always", the caller's policy (the
        command line's --yes), or Cockpit's permission policy for this session."""
        if remembered_key(request.kind, request.title) in self._always:
            option = option_of_kind(request.options, ("allow_always", "allow_once"))
            if option is not None:
                return str(option["optionId"]), "remembered", None
        if self.auto_answer is not None:
            option_id = self.auto_answer(request)
            if option_id is not None:
                return option_id, "policy", None
        rules, overrides = await self._rules()
        scope = "session" if request.kind in overrides else "global"
        decision = decide(rules, request.tool_call, self._root, scope)
        if decision.action == "ask":
            return None
        option = policy_choice(request.options, allow=decision.action == "allow")
        return (str(option["optionId"]), "policy", decision.reason) if option is not None else None

    async def _rules(self) -> tuple[Policy, dict[str, str]]:
        """The permission rules in force in this session, and the session's own among them."""
        record = await self._store.get_session(self.session_id)
        overrides = (record.info or {}).get("policy") if record is not None else None
        own = dict(overrides) if isinstance(overrides, dict) else {}
        return self.policy().with_overrides(own), own

    async def answer(
        self, request_id: str, option_id: str | None, decided_by: str = "user"
    ) -> None:
        """The user's answer to a pending request (None cancels it)."""
        pending = self.pending.get(request_id)
        if pending is None:
            raise KeyError(f"no pending permission request {request_id!r}")
        if pending.request.form is not None and option_id is not None:
            raise ValueError("a form is answered with its values, not with an option")
        if option_id is not None and find_option(pending.request.options, option_id) is None:
            raise ValueError(f"the agent offered no option {option_id!r}")
        await self._decide(pending, option_id, decided_by)

    async def _decide(
        self,
        pending: PendingRequest,
        option_id: str | None,
        decided_by: str,
        rule: str | None = None,
        *,
        reason: str | None = None,
    ) -> None:
        """Write the decision row, THEN answer the agent. `reason` says why a request was
        cancelled when it was not the user's cancel (the agent exited...)."""
        if pending.request.form is not None:
            action = "cancel" if option_id is None else option_id
            await self.forms.decide(pending, action, None, decided_by, reason=reason)
            return
        if pending.answer.done() or pending.deciding:
            return
        pending.deciding = True
        request = pending.request
        option = find_option(request.options, option_id) if option_id is not None else None
        if decided_by == REFUSED:
            text = f"Refused: {request.title} ({reason}); the agent was told it was cancelled."
        elif decided_by == UNANSWERED:
            text = f"Unanswered: {request.title} ({reason})"
        elif option is None and reason:
            text = f"Cancelled: {request.title} ({reason})"
        else:
            text = decision_text(request.title, option, decided_by, rule)
        row = note(
            self.session_id,
            "permission",
            text,
            toolCallId=request.tool_call_id,
            rule=rule,
            **({"reason": reason} if reason else {}),
            optionId=option_id,
            optionKind=option.get("kind") if option else None,
            decidedBy=decided_by,
            options=list(request.options),
        )
        try:
            if decided_by == REFUSED:
                await self.refused.record(row)
            else:
                await self._inbox.record(row)
        except Exception as error:
            # Nothing the transcript does not hold may be allowed: the agent hears
            # "cancelled", and the user is told why.
            log.exception("could not record a decision of session %s", self.session_id)
            option_id, option = None, None
            await self._inbox.tell(
                note(
                    self.session_id,
                    "error",
                    f"Could not record the answer to {request.title} ({describe(error)}); the "
                    "agent was told the request was cancelled.",
                )
            )
        if option is not None and option.get("kind") == "allow_always":
            self._always.add(remembered_key(request.kind, request.title))
        allowed = option is not None and str(option.get("kind")).startswith("allow")
        if allowed and (line := command_of(request.tool_call)) is not None:
            self._allowed_commands.append(line)
        self.settle(pending, option_id, option_id)

    def hold(self, pending: PendingRequest) -> None:
        """Keep a question for the user: it is listed, the session waits, clients hear."""
        request = pending.request
        self.pending[request.id] = pending
        if request.form is None:
            self._pending_by_tool.setdefault(request.tool_call_id, {})[request.id] = pending
        self._session.set_status(Status.WAITING, request.title)
        self._emit(PermissionEvent(request, resolved=False))

    def settle(self, pending: PendingRequest, result: Any, option_id: str | None = None) -> None:
        """A question's answer is recorded: the agent hears `result`, and the question is
        no longer listed (the session works again once none waits)."""
        request = pending.request
        if not pending.answer.done():
            pending.answer.set_result(result)
        if self.pending.pop(request.id, None) is not None:
            asked = self._pending_by_tool.get(request.tool_call_id, {})
            asked.pop(request.id, None)
            if not asked:
                self._pending_by_tool.pop(request.tool_call_id, None)
            self._emit(PermissionEvent(request, resolved=True, option_id=option_id))
            if not self.pending and self._session.status() == Status.WAITING:
                self._session.set_status(Status.WORKING, "")

    async def decide_pending(self, decided_by: str, reason: str | None) -> None:
        """Answer every pending request "cancelled", together: each still writes its row
        before its answer, and a thousand waiting cost one pass of the store's writer, not
        a thousand turns of it."""
        await asyncio.gather(
            *(
                self._decide(pending, None, decided_by, reason=reason)
                for pending in list(self.pending.values())
            )
        )

    async def close_unanswered(self) -> None:
        """The agent ended its turn while its questions waited: none is waiting any more,
        and the row says so (not that the user or the turn cancelled it)."""
        await self.decide_pending(UNANSWERED, "the agent ended its turn first")

    def release_all(self) -> None:
        """Answer every pending request "cancelled" without a row: the agent is stopping."""
        for pending in list(self.pending.values()):
            if not pending.answer.done():
                pending.answer.set_result(None)

    def asked(self, request_id: Any, tool_call_id: str) -> None:
        """The agent's request `request_id` (as JSON-RPC numbers it) asks about this tool
        call: a `$/cancel_request` for it names only the request."""
        self._permission_ids[request_id] = tool_call_id

    def withdrawn(self, request_id: Any) -> None:
        """The agent stopped waiting for its request `request_id`: a question still pending
        for that tool call is closed, with a row saying the agent cancelled it."""
        tool_call_id = self._permission_ids.pop(request_id, None)
        asked = self._pending_by_tool.get(tool_call_id, {}) if tool_call_id is not None else {}
        form = self.forms.withdrawn(request_id)
        for pending in [*asked.values(), *([form] if form is not None else [])]:
            if not pending.answer.done():
                task = asyncio.ensure_future(self._decide(pending, None, "agent"))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    def new_turn(self) -> None:
        """A turn begins: the commands allowed in the last one need asking again, and its
        refused requests are listed again."""
        self._allowed_commands.clear()
        self.refused.new_turn()

    async def may_run(self, argv: Sequence[str], cwd: str | None) -> bool:
        """Whether a command the agent wants run in a terminal may run. The policy's
        `execute` rule sees every one: `allow` runs it; otherwise a command the agent asked
        for this turn, and was allowed, runs once, and any other is put to the rules and
        the user like the agent's own requests (a `reject` rule refuses it, with a row)."""
        lines = command_lines(argv)
        rules, _ = await self._rules()
        if rules.action("execute") == "allow":
            return True
        for line in lines:
            if line in self._allowed_commands:
                self._allowed_commands.remove(line)
                return True
        shown = readable_command(argv)
        response = await self.ask(
            {
                "toolCallId": f"terminal-{uuid.uuid4().hex[:8]}",
                "title": f"Run {shown}",
                "kind": "execute",
                "rawInput": {"command": shown, "cwd": cwd or str(self._root)},
            },
            [
                {"optionId": "run", "name": "Run it", "kind": "allow_once"},
                {"optionId": "skip", "name": "Do not run it", "kind": "reject_once"},
            ],
        )
        outcome = response.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id == "run"

    def discard(self) -> None:
        """Cancel what still runs for a session that is gone."""
        for task in list(self._background):
            task.cancel()
