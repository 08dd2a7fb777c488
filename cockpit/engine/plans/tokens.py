"""The plan tool's tokens: one per session, minted each time its agent starts, kept only as
a hash, and forgotten with the session. A token lets the plan server write its own
session's plan and nothing else."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "replace")).digest()


class PlanTokens:
    """The hash of each session's current token."""

    def __init__(self) -> None:
        self._hashes: dict[str, bytes] = {}

    def mint(self, session: str) -> str:
        """A new token for `session` (the one before it stops working): returned once,
        never kept."""
        token = secrets.token_urlsafe(32)
        self._hashes[session] = _digest(token)
        return token

    def admits(self, token: object, session: object) -> bool:
        """Whether `token` is `session`'s current one."""
        if not isinstance(token, str) or not isinstance(session, str):
            return False
        kept = self._hashes.get(session)
        return kept is not None and hmac.compare_digest(kept, _digest(token))

    def forget(self, session: str) -> None:
        """The session is gone: its token works no more."""
        self._hashes.pop(session, None)

    def forget_all(self) -> None:
        """The engine closes: no token works any more."""
        self._hashes.clear()
