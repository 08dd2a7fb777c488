"""The way to Cockpit: where its plan socket is and who is asking, read from the
environment the agent started this server with, and one call asked over that socket."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.plan_protocol import (
    MOST_LINE_BYTES,
    SESSION_VARIABLE,
    SOCKET_VARIABLE,
    TOKEN_VARIABLE,
    read_line,
    request_line,
)

ANSWER_SECONDS = 10.0
"""Seconds Cockpit has to answer one call (`COCKPIT_PLAN_TIMEOUT` sets another: the test
suite waits less)."""

TIMEOUT_VARIABLE = "COCKPIT_PLAN_TIMEOUT"


@dataclass(frozen=True, slots=True)
class Reach:
    """Where Cockpit's plan socket is, the session this server writes for, and its token."""

    socket: str
    session: str
    token: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What Cockpit answered: whether the call did what it asked, the words for the
    model, and the plan as it now stands (None when there is none)."""

    ok: bool
    text: str
    plan: Mapping[str, Any] | None


def read_reach(environ: Mapping[str, str]) -> Reach | str:
    """The reach the environment gives, or the names of the variables it lacks."""
    values = {name: environ.get(name, "") for name in (SOCKET_VARIABLE, SESSION_VARIABLE)}
    values[TOKEN_VARIABLE] = environ.get(TOKEN_VARIABLE, "")
    missing = [name for name, value in values.items() if not value]
    if missing:
        return ", ".join(missing)
    return Reach(values[SOCKET_VARIABLE], values[SESSION_VARIABLE], values[TOKEN_VARIABLE])


def answer_seconds(environ: Mapping[str, str]) -> float:
    """How long to wait for an answer: ANSWER_SECONDS, or the environment's."""
    try:
        return max(0.1, float(environ.get(TIMEOUT_VARIABLE, ANSWER_SECONDS)))
    except ValueError:
        return ANSWER_SECONDS


class Unanswered(Exception):
    """Cockpit gave no answer the server can read: why, in words for the model."""


async def ask(reach: Reach, method: str, params: Mapping[str, Any], seconds: float) -> Answer:
    """Ask Cockpit one call and read its one answer line; Unanswered when the socket is
    missing or refused, the answer is late, too long or not an answer."""
    try:
        async with asyncio.timeout(seconds):
            return await exchange(reach, method, params)
    except TimeoutError:
        raise Unanswered(f"it gave no answer within {seconds:g} seconds") from None
    except (FileNotFoundError, ConnectionRefusedError):
        raise Unanswered("its plan socket is not there (Cockpit or this session stopped)") from None
    except OSError as error:
        raise Unanswered(f"its plan socket could not be reached ({error.strerror})") from None


async def exchange(reach: Reach, method: str, params: Mapping[str, Any]) -> Answer:
    """One connection: the request line out, one answer line back."""
    reader, writer = await asyncio.open_unix_connection(reach.socket, limit=MOST_LINE_BYTES)
    try:
        writer.write(request_line(reach.token, reach.session, method, params))
        await writer.drain()
        try:
            line = await reader.readline()
        except ValueError:  # longer than MOST_LINE_BYTES
            raise Unanswered("its answer was too long to read") from None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    answer = read_line(line)
    if answer is None or not isinstance(answer.get("ok"), bool):
        raise Unanswered(
            "its answer could not be read" if line else "it closed the call unanswered"
        )
    plan = answer.get("plan")
    text = answer.get("text")
    return Answer(
        ok=answer["ok"],
        text=text if isinstance(text, str) else "",
        plan=plan if isinstance(plan, Mapping) else None,
    )


def reach_from_environment() -> Reach | str:
    """The reach this process was started with (see `read_reach`)."""
    return read_reach(os.environ)
