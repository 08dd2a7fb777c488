"""The agent's requests that Cockpit refuses: each one a row in the session, within a bound.

The SDK checks a request's params against ACP's schema, and its method against the ones
the client serves, and answers "Invalid params" or "Method not found" by itself: Cockpit
never heard of such requests, so a hostile agent's malformed questions left no trace. The
transport now hands each request to `RefusedRequests.screen` first, in arrival order, and
the SDK's own models judge it there as the SDK will: a request it will refuse gets its
row, committed before the SDK answers it. Requests refused later by Cockpit's own rules
(a file outside the root, a question with ambiguous options) are counted here too.

The SDK also spreads a request's `_meta` over its validated params: a `_meta` key named
like a param (`path`, `options`) stood in for it unchecked, and ended as "Internal error"
with no row. Such keys are taken out of the request before the SDK sees it, with a row.

Past `LISTED` refusals in a turn, one row counts the rest, so an agent cannot fill the
store with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from acp import RequestError
from acp.meta import CLIENT_METHODS
from acp.schema import (
    CreateElicitationRequest,
    CreateTerminalRequest,
    KillTerminalRequest,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    TerminalOutputRequest,
    WaitForTerminalExitRequest,
    WriteTextFileRequest,
)
from pydantic import BaseModel, RootModel, ValidationError

from cockpit.engine.inbox import SessionInbox, received
from cockpit.engine.permission_rules import REFUSED
from cockpit.engine.transport import preview
from cockpit.engine.wire import first_problem
from store import Chunk, note

LISTED: Final = 100
"""Refused requests listed one row each in a turn; the rest are counted in one row."""

COUNT_ID: Final = "refused-requests"
"""The id of the row that counts a turn's refusals past `LISTED` (one per turn)."""

PERMISSION: Final = CLIENT_METHODS["session_request_permission"]
ELICITATION: Final = CLIENT_METHODS["elicitation_create"]


class ElicitationRequest(RootModel[CreateElicitationRequest]):
    """`elicitation/create`'s params, which the SDK checks as one of its three shapes."""

    @property
    def known_mode(self) -> bool:
        """True for a form or a link: the SDK refuses any other mode by itself."""
        return getattr(self.root, "mode", None) in ("form", "url")


REQUEST_SCHEMAS: Final[Mapping[str, type[BaseModel]]] = {
    PERMISSION: RequestPermissionRequest,
    CLIENT_METHODS["fs_read_text_file"]: ReadTextFileRequest,
    CLIENT_METHODS["fs_write_text_file"]: WriteTextFileRequest,
    CLIENT_METHODS["terminal_create"]: CreateTerminalRequest,
    CLIENT_METHODS["terminal_output"]: TerminalOutputRequest,
    CLIENT_METHODS["terminal_wait_for_exit"]: WaitForTerminalExitRequest,
    CLIENT_METHODS["terminal_kill"]: KillTerminalRequest,
    CLIENT_METHODS["terminal_release"]: ReleaseTerminalRequest,
    ELICITATION: ElicitationRequest,
}
"""The requests Cockpit serves (`ClientAdapter`), and the SDK's model that each one's params
must follow. The SDK answers any other request "Method not found"."""

META_NAMES: Final[Mapping[str, frozenset[str]]] = {ELICITATION: frozenset({"message", "mode"})}
"""The arguments the SDK passes for a request whose model does not list them as fields."""

INVALID_PARAMS: Final = str(RequestError.invalid_params())
METHOD_NOT_FOUND: Final = str(RequestError.method_not_found(""))


@dataclass(frozen=True, slots=True)
class Refusal:
    """A request the SDK will refuse: what it asked, why it is refused, and the answer."""

    method: str
    """The request's method, as a bounded printable preview."""
    subject: str
    """What the agent asked for, in a few words ("read of notes.txt")."""
    reason: str
    answer: str
    """The SDK's answer: "Invalid params" or "Method not found"."""
    params: Any


def shown(text: str) -> str:
    """A bounded, printable rendering of a string the agent sent."""
    return preview(text.encode("utf-8", "replace"))


def refusal(message: Mapping[str, Any]) -> Refusal | None:
    """Why the SDK will refuse this request from the agent, or None when it will pass it
    on to Cockpit. The params are judged by the model the SDK itself validates them with."""
    method = message.get("method")
    params = message.get("params")
    if not isinstance(method, str):
        return None  # the transport dropped it already
    schema = REQUEST_SCHEMAS.get(method)
    if schema is None:
        reason = "Cockpit serves no such request"
        return Refusal(shown(method), f"{shown(method)} request", reason, METHOD_NOT_FOUND, params)
    try:
        checked = schema.model_validate(params)
    except ValidationError as error:
        if params is None:
            problem = "it has no params"
        elif not isinstance(params, dict):
            problem = "its params are not an object"
        else:
            problem = shown(first_problem(error))
        reason = f"not a valid ACP request: {problem}"
        return Refusal(method, subject_of(method, params), reason, INVALID_PARAMS, params)
    if isinstance(checked, ElicitationRequest) and not checked.known_mode:
        reason = "Cockpit shows forms and links, not this kind of question"
        return Refusal(method, subject_of(method, params), reason, INVALID_PARAMS, params)
    return None


def overriding_meta(message: Mapping[str, Any]) -> list[str]:
    """The keys of a served request's `_meta` that the SDK would pass to Cockpit in place
    of the request's own params (it passes `_meta` keys as keyword arguments after them),
    or that no method can take (`self`)."""
    method = message.get("method")
    schema = REQUEST_SCHEMAS.get(method) if isinstance(method, str) else None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if schema is None or not isinstance(meta, dict):
        return []
    fields = META_NAMES.get(str(method)) or {n for n in schema.model_fields if n != "field_meta"}
    names = set(fields) | {"self"}
    return [key for key in meta if key in names]


def subject_of(method: str, params: Any) -> str:
    """What a request asks for, in the words of its row, with what can be read of it."""
    fields = params if isinstance(params, dict) else {}

    def named(field: str, text: str, fallback: str) -> str:
        value = fields.get(field)
        return text.format(shown(value)) if isinstance(value, str) else fallback

    if method == PERMISSION:
        tool_call = fields.get("toolCall")
        title = tool_call.get("title") if isinstance(tool_call, dict) else None
        return shown(title) if isinstance(title, str) and title else "a permission request"
    if method == CLIENT_METHODS["fs_read_text_file"]:
        return named("path", "read of {}", "file read")
    if method == CLIENT_METHODS["fs_write_text_file"]:
        return named("path", "write of {}", "file write")
    if method == CLIENT_METHODS["terminal_create"]:
        return named("command", "command {}", "command")
    if method == ELICITATION:
        return named("message", "form {}", "form")
    return f"{method} request"


def refusal_row(session_id: str, refused: Refusal) -> Chunk:
    """The row for a refused request. A permission request's reads as a refused question
    does (its kind and wording); any other's as a refused file request does."""
    details: dict[str, Any] = {
        "method": refused.method,
        "reason": refused.reason,
        "answer": refused.answer,
        **received(refused.params),
    }
    if refused.method == PERMISSION:
        return note(
            session_id,
            "permission",
            f'Refused: {refused.subject} ({refused.reason}); the agent was answered "'
            f'{refused.answer}".',
            decidedBy=REFUSED,
            **details,
        )
    return note(
        session_id,
        "notice",
        f"Refused the agent's {refused.subject} ({refused.reason}); it was answered "
        f'"{refused.answer}".',
        **details,
    )


def meta_row(session_id: str, method: str, params: Any, ignored: list[str]) -> Chunk:
    """The row for `_meta` keys taken out of a request (`overriding_meta`)."""
    keys = shown(", ".join(ignored))
    return note(
        session_id,
        "notice",
        f"Ignored {keys} in the _meta of the agent's {subject_of(method, params)}: the SDK "
        "would have passed them in place of the request's own fields.",
        method=method,
        ignoredMeta=[shown(key) for key in ignored[:20]],
    )


def count_row(session_id: str, counted: int) -> Chunk:
    """The one row of a turn that counts its refused requests past `LISTED`."""
    requests = "request" if counted == 1 else "requests"
    return note(
        session_id,
        "notice",
        f"…and {counted:,} more refused {requests} this turn, each answered with an error "
        f"(past {LISTED} in a turn they are counted here, not listed).",
        message_id=COUNT_ID,
        refusedCount=counted,
    )


class RefusedRequests:
    """The requests refused in one session this turn, and their rows."""

    def __init__(self, session_id: str, inbox: SessionInbox) -> None:
        self.session_id = session_id
        self._inbox = inbox
        self.count = 0
        """Requests refused since the turn began."""

    def new_turn(self) -> None:
        """A turn begins: its refusals are listed again."""
        self.count = 0

    async def screen(self, message: dict[str, Any]) -> bool:
        """Called with every request from the agent before the SDK sees it, in arrival
        order. True when the SDK will refuse it: its row is stored by then. A `_meta` key
        that would stand in for a param is taken out of the message, with a row."""
        found = refusal(message)
        if found is not None:
            await self.tell(refusal_row(self.session_id, found))
            if found.method == ELICITATION:
                # The SDK's error for some malformed forms carries a Python exception in its
                # data, which it cannot send: the agent would wait for good. Params it
                # refuses with a plain error stand in (the row keeps what was sent).
                message["params"] = {}
            return True
        if ignored := overriding_meta(message):
            params = message["params"]
            params["_meta"] = {k: v for k, v in params["_meta"].items() if k not in ignored}
            await self.tell(meta_row(self.session_id, message["method"], params, ignored))
        return False

    async def record(self, row: Chunk) -> None:
        """Store a refusal's row, or past `LISTED` the turn's count, and wait until it is
        committed; raises the store's error when it could not be."""
        await self._inbox.record(self._counted(row))

    async def tell(self, row: Chunk) -> None:
        """Store a refusal's row, or past `LISTED` the turn's count; a store that cannot
        take it is reported, and the session goes on."""
        await self._inbox.tell(self._counted(row))

    def _counted(self, row: Chunk) -> Chunk:
        self.count += 1
        return row if self.count <= LISTED else count_row(self.session_id, self.count - LISTED)
