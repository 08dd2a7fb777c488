"""How a failed model call is told: to the user as one line they can act on, and to the
client as the JSON-RPC error the turn ends with (auth-required for a refused key)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.core import RequestError

from cockpit.agentkit.claude.config import KEY_VARIABLE, NO_KEY

if TYPE_CHECKING:
    import anthropic


def describe_api_error(error: anthropic.APIError) -> str:
    """An API failure as one line a user can act on."""
    import anthropic  # loaded already: the failed call made the error

    if isinstance(error, anthropic.APIStatusError):
        detail = error.body.get("error") if isinstance(error.body, dict) else None
        if isinstance(detail, dict):
            kind, message = detail.get("type", "error"), detail.get("message", "")
        else:
            kind, message = "error", str(error.message)
        status = error.status_code
        where = f"HTTP {status}" if status != 200 else "during the stream"
        return f"The Anthropic API failed ({kind}, {where}): {message}"
    if isinstance(error, anthropic.APITimeoutError):
        return "The Anthropic API did not answer in time."
    if isinstance(error, anthropic.APIConnectionError):
        return f"Could not reach the Anthropic API: {error}"
    return f"The Anthropic API failed: {error}"


class ModelFailure(Exception):
    """The model call failed; the turn ends with this message (and the HTTP status)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def api_request_error(failure: ModelFailure) -> RequestError:
    """The JSON-RPC error a failed model call ends the turn with."""
    status = failure.status
    if status in (401, 403):  # the API's words, then what to do about them
        said = str(failure).rstrip()
        said += "" if said.endswith((".", "!", "?")) else "."
        return RequestError.auth_required({"message": f"{said} {NO_KEY}", "variable": KEY_VARIABLE})
    return RequestError(-32603, str(failure), {"status": status} if status else None)
