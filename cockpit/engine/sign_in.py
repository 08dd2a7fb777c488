"""Signing a session's agent in: the ways its `initialize` answer offers, whether it asks
the user to sign in now, and the way the user chose, with the values they typed.

All of it lives in memory, for one session, while the engine runs: a key the user types
goes into the agent's environment (or its `authenticate` request) and nowhere else, never
into the store, a row, a log or an event.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from acp import RequestError

from cockpit.records import KEY_FIELD, SignIn, SignInMethod, read_sign_in_methods

ADDRESS = re.compile(r"https?://[^\s<>\"'`]+")
"""A web address in what an agent prints."""

AUTH_REQUIRED = -32000
"""ACP's error code for "authentication required"."""


def asks_sign_in(error: BaseException) -> bool:
    """True when an agent's error says the user must sign in first."""
    return isinstance(error, RequestError) and error.code == AUTH_REQUIRED


def web_addresses(text: str) -> list[str]:
    """The web addresses in `text`, in order, each once (a sentence's last dot left out)."""
    found = [match.rstrip(".,;:)") for match in ADDRESS.findall(text)]
    return list(dict.fromkeys(found))


def offered_methods(auth_methods: object) -> tuple[SignInMethod, ...]:
    """The ways an `initialize` answer offers, read from its SDK models or its JSON."""
    items = [
        method.model_dump(by_alias=True, exclude_none=True)
        if hasattr(method, "model_dump")
        else method
        for method in (auth_methods if isinstance(auth_methods, list) else [])
    ]
    return read_sign_in_methods(items)


def sign_in_words(sign_in: SignIn) -> str:
    """The row that tells the user the agent asks them to sign in, and how they can."""
    if not sign_in.methods:
        return (
            f"The agent asks you to sign in ({sign_in.message}), but it offers no way Cockpit "
            "can do it: sign in with the agent's own program, then send a prompt again."
        )
    ways = "\n".join(f"- {method.label}" for method in sign_in.methods)
    return (
        f"The agent asks you to sign in ({sign_in.message}). It offers:\n{ways}\n\n"
        "Choose one with /login, or run `cockpit run` in a terminal."
    )


class SessionSignIn:
    """The sign-in of one session's agent, in memory only."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.offered: tuple[SignInMethod, ...] = ()
        """What the agent's last `initialize` answer offered."""
        self.logout = False
        """The agent can sign out (`agentCapabilities.auth.logout`)."""
        self.needed: SignIn | None = None
        """Set while the agent waits for the user to sign in."""
        self.chosen: SignInMethod | None = None
        """The way the user chose: each start of the agent signs in with it."""
        self._values: dict[str, str] = {}

    def offer(self, auth_methods: object, capabilities: Mapping[str, Any]) -> None:
        """What an `initialize` answer said of signing in."""
        self.offered = offered_methods(auth_methods)
        auth = capabilities.get("auth")
        self.logout = isinstance(auth, Mapping) and auth.get("logout") is not None

    def need(self, message: str) -> SignIn:
        """The agent asks the user to sign in: say so until they have."""
        self.needed = SignIn(self.session_id, message, self.offered, self.logout)
        return self.needed

    def choose(self, method_id: str, values: Mapping[str, str]) -> SignInMethod:
        """The user's choice, with the values it needs. ValueError, saying why, for a way
        the agent does not offer or a value left out; nothing is kept then."""
        method = next((m for m in self.offered if m.id == method_id), None)
        if method is None:
            offered = ", ".join(m.id for m in self.offered) or "none"
            raise ValueError(
                f"The agent offers no sign-in method {method_id!r} (it offers: {offered})."
            )
        missing = [name for name in method.fields if not values.get(name)]
        if missing:
            raise ValueError(f"{method.name} needs a value for {', '.join(missing)}.")
        self.chosen = method
        self._values = {name: values[name] for name in method.fields}
        return method

    @property
    def variables(self) -> dict[str, str]:
        """What the chosen way adds to the agent's environment (an `env_var` method's)."""
        if self.chosen is None or self.chosen.kind != "env_var":
            return {}
        return dict(self._values)

    def request_meta(self) -> dict[str, Any]:
        """What `authenticate` carries besides the method: a key method's key."""
        if self.chosen is not None and self.chosen.kind == "key":
            return {KEY_FIELD: self._values.get(KEY_FIELD, "")}
        return {}

    def signed_in(self) -> None:
        """The agent opened its session: it asks nothing more."""
        self.needed = None

    def forget(self) -> None:
        """Signed out: the choice and its values go."""
        self.chosen = None
        self._values = {}
