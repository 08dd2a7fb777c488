"""The errors a bundled agent words: a client's refusal as one line, and the clear
"not found" a session/load of an unknown session answers with."""

from __future__ import annotations

import json

from acp.core import RequestError


def error_text(error: RequestError) -> str:
    """A client error as one line: message, code and data."""
    data = f": {json.dumps(error.data)}" if error.data else ""
    return f"{error} (code {error.code}){data}"


def resource_missing(where: str, **details: str) -> RequestError:
    """ACP's resource-not-found error for `where` (a URI, or an id), with `details` added
    to its data (why it is missing, for the user)."""
    error = RequestError.resource_not_found(where)
    error.data = {**(error.data or {}), **details}
    return error
