"""A client's requests, run by the engine: the contract's calls by name (those of
`cockpit.api.METHODS`, and no other method of the engine's), their arguments read from the
wire and their results written back (`cockpit.protocol`), and the state a client starts
from when it attaches."""

from __future__ import annotations

import inspect
from typing import Any

from acp import RequestError

from cockpit import protocol
from cockpit.engine.core import Engine
from cockpit.environment import Environment

METHOD_NOT_FOUND = -32601
"""JSON-RPC's code for a method the other end does not have."""


async def call_engine(
    engine: Engine, params: dict[str, Any], environment: Environment | None = None
) -> Any:
    """Run `params["name"]` of the contract with `params["args"]`; its result, encoded. A
    call that may start an agent runs with `environment`, the world of the client asking."""
    name = params.get("name")
    if not isinstance(name, str) or name not in protocol.CALLS:
        raise not_a_call(name)
    raw = params.get("args") or {}
    if not isinstance(raw, dict) or "env" in raw:
        raise RequestError.invalid_params({"args": "must be an object of the call's arguments"})
    args = {str(key): protocol.decode(value) for key, value in raw.items()}
    if name in protocol.STARTS:
        args["env"] = environment
    try:
        result = getattr(engine, name)(**args)
    except TypeError as error:
        raise RequestError.invalid_params({"details": str(error)}) from error
    if inspect.isawaitable(result):
        result = await result
    return protocol.encode(result)


def not_a_call(name: object) -> RequestError:
    """The refusal of a name that is not one of the contract's calls (`api.METHODS`): the
    engine's other methods (closing it, its internals) are not the client's to run."""
    return RequestError(
        METHOD_NOT_FOUND,
        "Method not found",
        {"method": f"engine/{name}", "message": f"{name!r} is not a call of the Cockpit contract"},
    )


async def snapshot(engine: Engine) -> dict[str, Any]:
    """What a client needs to answer the contract's immediate questions (a session's status,
    what waits, what is unread, how each session's agent runs) until events update it."""
    sessions = await engine.sessions()
    return {
        "now": engine.now(),
        "problems": list(engine.problems),
        "saving_problem": engine.saving_problem,
        "saving_failure": engine.saving_failure,
        "statuses": {session: engine.status(session) for session in engine.live_sessions()},
        "pending": protocol.encode(engine.pending_permissions()),
        "unread": [record.id for record in sessions if engine.unread(record.id)],
        "agents": protocol.encode(engine.agents()),
        "specs": {record.id: protocol.encode(engine.agent_of(record)) for record in sessions},
    }
