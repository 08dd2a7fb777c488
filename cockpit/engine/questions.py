"""A question the agent asked that waits for the user's answer: a permission request or a
form. The permission broker holds both, in the order they came."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from cockpit.api import PermissionRequest


@dataclass
class PendingRequest:
    """A question waiting for its answer: a permission request (answered with an option
    id, None for cancelled) or a form (answered with an action and its content)."""

    request: PermissionRequest
    answer: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    deciding: bool = False
    """True once an answer is being recorded: a second one (a cancel meanwhile) waits out."""
