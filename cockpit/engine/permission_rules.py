"""Pure rules for permission requests: which option an earlier "always" picks, which
options cannot be answered safely, and how a decision reads in the transcript. The
option kinds and the choice a blanket policy makes are the contract's (`cockpit.api`):
a client with no one to ask picks as the engine does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cockpit.api import ALLOW_KINDS, REJECT_KINDS

KNOWN_KINDS = frozenset(ALLOW_KINDS + REJECT_KINDS)

REFUSED = "refused"
"""Who decided a request Cockpit would not answer (its options were ambiguous)."""

UNANSWERED = "unanswered"
"""Who "decided" a request the agent stopped waiting for: it ended its turn first."""

OUTCOME_WORDS = {
    "allow_once": "Allowed once",
    "allow_always": "Always allowed",
    "reject_once": "Rejected",
    "reject_always": "Always rejected",
}


def find_option(options: Iterable[Mapping[str, Any]], option_id: str) -> Mapping[str, Any] | None:
    """The option with this id, if the agent offered it."""
    return next((o for o in options if o.get("optionId") == option_id), None)


def ambiguity(options: Iterable[Mapping[str, Any]]) -> str | None:
    """Why a request's options cannot be answered safely, or None when they can.

    An answer names an option by its id: when two options share one, the agent may read
    "allow" where Cockpit decided "reject" (and the row would say whichever came first).
    With no options there is nothing to choose, and an option of a kind outside the four
    ACP defines cannot be matched to a decision. Such a request is refused."""
    listed = list(options)
    if not listed:
        return "the agent offered no options"
    ids = [option.get("optionId") for option in listed]
    if any(not isinstance(option_id, str) or not option_id for option_id in ids):
        return "an option has no id"
    shared = next((option_id for option_id in ids if ids.count(option_id) > 1), None)
    if shared is not None:
        return f"two options share the id {shared!r}"
    unknown = next((o.get("kind") for o in listed if o.get("kind") not in KNOWN_KINDS), None)
    if unknown is not None:
        return f"an option has the unknown kind {unknown!r}"
    return None


def remembered_key(kind: str, title: str) -> tuple[str, str]:
    """What an "allow always" answer is remembered by, per session: tool kind and title."""
    return kind, title


def decision_text(
    title: str, option: Mapping[str, Any] | None, decided_by: str, rule: str | None = None
) -> str:
    """One line for the decision row: what was decided, about what, and by whom (the rule
    that decided, when a Cockpit policy did)."""
    if option is None:
        return f"Cancelled: {title} (the turn was cancelled before an answer)"
    words = OUTCOME_WORDS.get(str(option.get("kind")), str(option.get("name") or "Answered"))
    if rule:
        return f"{words}: {title} ({rule})"
    by = {
        "user": "",
        "policy": " (by policy)",
        "remembered": " (remembered from an earlier 'always')",
    }.get(decided_by, f" ({decided_by})")
    return f"{words}: {title}{by}"
