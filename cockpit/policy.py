"""Permission policies owned by Cockpit, applied to every agent alike.

For each tool kind a policy says `allow`, `ask` or `reject`. The global policy comes from
`policy.toml` in Cockpit's config folder; a session may override any kind. A read is only
allowed automatically when every location it names lies inside the session's root.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ACTIONS = ("allow", "ask", "reject")
KINDS = (
    "read",
    "edit",
    "delete",
    "move",
    "search",
    "execute",
    "think",
    "fetch",
    "switch_mode",
    "other",
)

DEFAULT_RULES: Mapping[str, str] = {
    "read": "allow",
    "search": "allow",
    "think": "allow",
    "edit": "ask",
    "delete": "ask",
    "move": "ask",
    "execute": "ask",
    "fetch": "ask",
    "switch_mode": "ask",
    "other": "ask",
}
"""Reads inside the root are allowed; anything that changes something, or leaves the
machine, is asked."""

POLICY_FILE = "policy.toml"


class PolicyError(ValueError):
    """The policy file is not valid."""


@dataclass(frozen=True)
class Policy:
    """What to do for each tool kind."""

    rules: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))

    def action(self, kind: str) -> str:
        """The action for a kind (an unknown kind follows `other`)."""
        return self.rules.get(kind, self.rules.get("other", "ask"))

    def with_overrides(self, overrides: Mapping[str, str]) -> Policy:
        """This policy with a session's own rules on top."""
        return Policy({**self.rules, **{k: v for k, v in overrides.items() if v in ACTIONS}})


@dataclass(frozen=True)
class Decision:
    """A policy's verdict on one request: the action and why."""

    action: str
    reason: str


def locations_inside(tool_call: Mapping[str, Any], root: Path) -> bool:
    """True when every location the tool call names resolves inside `root`."""
    real_root = os.path.realpath(root)
    for location in tool_call.get("locations") or ():
        path = location.get("path") if isinstance(location, Mapping) else None
        if not isinstance(path, str):
            continue
        real = os.path.realpath(path if os.path.isabs(path) else os.path.join(real_root, path))
        if real != real_root and not real.startswith(real_root + os.sep):
            return False
    return True


def decide(policy: Policy, tool_call: Mapping[str, Any], root: Path, scope: str) -> Decision:
    """What `policy` does with a permission request for `tool_call` in a session at `root`.

    `scope` says where the rule came from ("global" or "session"), for the decision row.
    """
    kind = str(tool_call.get("kind") or "other")
    action = policy.action(kind)
    if action == "allow" and kind in ("read", "search") and not locations_inside(tool_call, root):
        return Decision("ask", f"{kind} outside the session's folder")
    return Decision(action, f"{scope} policy: {kind} = {action}")


def parse_policy(text: str, origin: str) -> Policy:
    """A policy from TOML: a `[permissions]` table of kind = "allow" | "ask" | "reject"."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"{origin}: not valid TOML: {error}") from error
    table = document.get("permissions", {})
    if not isinstance(table, dict):
        raise PolicyError(f"{origin}: [permissions] must be a table of kind = action")
    rules = dict(DEFAULT_RULES)
    for kind, action in table.items():
        if kind not in KINDS:
            raise PolicyError(f"{origin}: unknown tool kind {kind!r} (known: {', '.join(KINDS)})")
        if action not in ACTIONS:
            raise PolicyError(f"{origin}: {kind} = {action!r}; use one of {', '.join(ACTIONS)}")
        rules[kind] = action
    return Policy(rules)


def load_policy(config: Path) -> tuple[Policy, str | None]:
    """The global policy from `config/policy.toml` (defaults when missing), and a problem
    message when the file is broken (the defaults are used then)."""
    path = config / POLICY_FILE
    if not path.is_file():
        return Policy(), None
    try:
        return parse_policy(path.read_text(encoding="utf-8"), str(path)), None
    except (PolicyError, OSError, UnicodeDecodeError) as error:
        return Policy(), f"{error} (using the default permission policy)"
