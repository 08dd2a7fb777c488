"""The transport's tap: every message the agent sends, sorted the moment it arrives.

The SDK runs every notification as its own task, which may reorder a streamed reply; the
tap sees each message first, in arrival order, on the loop that reads the agent. It takes
the `session/update`s itself, as wire JSON, into the session's inbox; it notes which tool
call each permission request is about (its row comes first, and a `$/cancel_request` for
it finds it); everything else goes on to the SDK. Before that, it screens each request:
one the SDK will refuse has its row stored, and goes straight on to the SDK, which
answers it with an error (it makes no tool call row and no question).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from cockpit.engine.inbox import SessionInbox
from cockpit.engine.permission_broker import PermissionBroker
from cockpit.engine.wire import BadUpdate, checked_update
from store import note
from store.chunks import TEXT_UPDATES

log = logging.getLogger(__name__)


class AgentTap:
    """What the transport calls with each incoming message (see `__call__`)."""

    def __init__(
        self,
        session_id: str,
        inbox: SessionInbox,
        broker: PermissionBroker,
        agent_session_id: Callable[[], str | None],
    ) -> None:
        self.session_id = session_id
        self._inbox = inbox
        self._broker = broker
        self._agent_session_id = agent_session_id
        """The agent's own id for this session, once it has one (read at each message)."""

    def __call__(self, message: dict[str, Any]) -> bool:
        """Called by the transport for every incoming message, in arrival order. Returns
        True for a `session/update`: it is taken here, as wire JSON, and the SDK is spared
        validating and dispatching it (a task, a pydantic model and a telemetry span per
        streamed token, only to be turned back into JSON for the store). It never raises:
        a message it cannot read is a notice (and a request still goes to the SDK, which
        answers it), so the loop reading the agent goes on."""
        try:
            return self._take(message)
        except Exception:
            log.exception("session %s: could not read a message from the agent", self.session_id)
            method = message.get("method")
            self._inbox.malformed(f"a {method or 'response'} Cockpit could not read", message)
            return method == "session/update" and "id" not in message

    async def screen(self, message: dict[str, Any]) -> bool:
        """Called by the transport with every request, in arrival order, before the tap and
        the SDK see it. True when the SDK will refuse it (its params do not follow ACP, or
        Cockpit serves no such method): its row is stored by then, and the request reaches
        neither the tool calls nor the questions. It never raises."""
        try:
            return await self._broker.refused.screen(message)
        except Exception:
            log.exception("session %s: could not screen a request from the agent", self.session_id)
            return False

    def _take(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        params = message.get("params")
        if method == "session/update" and "id" not in message and not isinstance(params, dict):
            self._inbox.malformed("a session/update whose params are not an object", params)
            return True  # the SDK would only log a validation traceback and drop it
        if not isinstance(params, dict):
            return False
        if method == "session/update" and "id" not in message:
            agent_session_id = self._agent_session_id()
            if params.get("sessionId") != agent_session_id and agent_session_id is not None:
                self._inbox.put(
                    note(
                        self.session_id,
                        "notice",
                        "The agent sent an update for another session "
                        f"({params.get('sessionId')!r}); it was ignored.",
                    )
                )
                return True
            update = params.get("update")
            if isinstance(update, dict):
                try:
                    update = checked_update(update)
                except BadUpdate as problem:
                    self._inbox.malformed(f"a session/update ({problem})", update)
                    return True
            if not isinstance(update, Mapping):
                self._inbox.malformed("a session/update whose update is not an object", update)
            elif update.get("sessionUpdate") in TEXT_UPDATES and not isinstance(
                update.get("content"), dict
            ):
                self._inbox.malformed(
                    f"a text chunk ({update['sessionUpdate']}) whose content is not an object",
                    update,
                )
            else:
                self._inbox.put(update)
            return True
        elif method == "session/request_permission":
            # A request off the schema was screened out before it came here.
            tool_call = params.get("toolCall")
            if isinstance(tool_call, dict) and isinstance(tool_call.get("toolCallId"), str):
                # The tool call a permission is about becomes (or updates) its row, in order:
                # some agents ask before they ever send the tool call itself.
                self._inbox.put({**tool_call, "sessionUpdate": "tool_call_update"})
                self._broker.asked(message.get("id"), tool_call["toolCallId"])
        elif method == "elicitation/create" and "id" in message:
            self._broker.forms.arrived(message["id"])  # a `$/cancel_request` may name it
        elif method == "$/cancel_request":
            self._broker.withdrawn(params.get("requestId"))
        return False
