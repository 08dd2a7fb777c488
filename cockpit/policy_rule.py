"""A permission rule as the user writes it: the tool kinds, the actions, and the words of
`/policy KIND [ACTION]`. The engine checks a rule it is given and the UI parses what the
user typed with the same words, so both say the same thing about a bad one.
"""

from __future__ import annotations

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


def check_rule(kind: str, action: str | None) -> None:
    """Refuse (ValueError, naming what is valid) a rule for a kind that does not exist or
    an action that is not one (None, removing a rule, is fine)."""
    if kind not in KINDS:
        raise ValueError(f"No tool kind {kind!r}; the kinds are: {', '.join(KINDS)}")
    if action is not None and action not in ACTIONS:
        raise ValueError(f"{kind} = {action!r}? Use one of: {', '.join(ACTIONS)}")


def parse_rule(arguments: str) -> tuple[str, str | None] | None:
    """The arguments of `/policy KIND [ACTION]` (None when there are none: list the rules),
    checked by `check_rule`."""
    words = arguments.lower().split()
    if not words:
        return None
    if len(words) > 2:
        raise ValueError("Use /policy KIND allow|ask|reject, or /policy KIND to remove it")
    kind, action = words[0], words[1] if len(words) == 2 else None
    check_rule(kind, action)
    return kind, action
