"""The bounds on what a client may make the engine keep or read: one draft, one request.

Every side shares them: the screen and the command line check before they send, so that
text past a bound stays where the user typed it; the engine and the service enforce them,
so that no client can make the service hold, decode or hand every other client an
unbounded message. Pure: no I/O.
"""

from __future__ import annotations

import json

DRAFT_BYTES = 1024 * 1024
"""The longest draft the engine keeps for a session (bytes of UTF-8). Every client that
lists the sessions reads every draft: a 60 MB one made each attach cost the service half a
second, and a thousand attaches left it unable to answer `status`."""

REQUEST_BYTES = 16 * 1024 * 1024
"""The longest request the service reads from a client: one line of JSON, in bytes. A
longer one is refused without being decoded, and the connection goes on."""

ENVELOPE_BYTES = 4096
"""What a request adds around the text it carries (its method, the call's name, a session's
id): a prompt may take the rest of REQUEST_BYTES."""


class RequestTooLarge(ValueError):
    """A request longer than REQUEST_BYTES: not sent (or, sent by a client that did not
    check, not read)."""


def encoded(message: object) -> bytes:
    """`message` as one line of the wire: compact JSON, UTF-8, and the newline that ends
    it. A lone surrogate, which UTF-8 cannot hold, goes as JSON's own escape (`\\udcff`):
    it reaches the other side as it was sent, for the engine to replace and say so."""
    text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "backslashreplace") + b"\n"


def megabytes(size: int) -> str:
    """A size in words a user reads at a glance: "20.0 MB"."""
    return f"{size / 1024 / 1024:.1f} MB"


def past(size: int, bound: int) -> tuple[str, str]:
    """A size past a bound and the bound, in words that tell them apart: in MB, or in KB
    when both would read "1.0 MB"."""
    if megabytes(size) != megabytes(bound):
        return megabytes(size), megabytes(bound)
    return f"{-(-size // 1024):,} KB", f"{bound // 1024:,} KB"


def draft_size(text: str) -> int:
    """What a draft weighs against DRAFT_BYTES."""
    if len(text) * 4 <= DRAFT_BYTES:  # no character takes more than 4 bytes: no need to count
        return len(text)
    return len(text.encode("utf-8", "replace"))


def draft_too_long(text: str) -> bool:
    """Whether the engine would refuse to keep `text` as a draft."""
    return draft_size(text) > DRAFT_BYTES


def draft_refusal(text: str) -> str:
    """What the user is told of a draft past the bound."""
    size, bound = past(draft_size(text), DRAFT_BYTES)
    return (
        f"This draft is {size}, over the {bound} Cockpit keeps: it stays in the prompt, but "
        "is not saved (a restart loses it)."
    )


def prompt_size(text: str) -> int:
    """What a prompt weighs on the wire: its text as a JSON string, and the request around
    it."""
    return len(encoded(text)) + ENVELOPE_BYTES


def prompt_too_long(text: str) -> bool:
    """Whether a request carrying `text` would be over REQUEST_BYTES."""
    if len(text) * 6 + ENVELOPE_BYTES < REQUEST_BYTES:  # no character takes more than 6 bytes
        return False
    return prompt_size(text) > REQUEST_BYTES


def prompt_refusal(text: str) -> str:
    """What the user is told of a prompt past the bound (nothing of it was sent)."""
    size, bound = past(prompt_size(text), REQUEST_BYTES)
    return (
        f"This prompt is {size}, over the {bound} a request to Cockpit may take: nothing was "
        "sent. Send it in parts, or as a file the agent reads (`@path`)."
    )


def request_refusal(size: int, outcome: str) -> str:
    """What a client is told of a request past the bound, and what became of it (it was
    not sent; the service did not read it)."""
    said, bound = past(size, REQUEST_BYTES)
    return (
        f"the request is {said}, over the {bound} the Cockpit service takes in one "
        f"request: {outcome}"
    )
