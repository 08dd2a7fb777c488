"""How the engine words what went wrong for the user: one line per error, whatever raised
it (the agent, the SDK reading its reply, the store, the system), and the error a failed
start raises after its row is written."""

from __future__ import annotations

from acp import RequestError
from pydantic import ValidationError

from cockpit.text.textout import describe_error


def describe(error: BaseException) -> str:
    """An error as one line for the user."""
    if isinstance(error, RequestError):
        data = f" {error.data}" if getattr(error, "data", None) else ""
        return f"{error} (code {error.code}){data}"
    if isinstance(error, ValidationError):
        first = error.errors()[0]["msg"]
        return f"it sent a reply Cockpit cannot read ({error.error_count()} problem(s): {first})"
    return describe_error(error)
