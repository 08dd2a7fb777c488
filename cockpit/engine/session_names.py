"""Which stored session a command line means: `cockpit show`, `send`, `wait`, `answer` and
`inspect` take the start of its id or its title, as a person remembers it. Pure rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from cockpit.text.sanitize import printable
from store import SessionRecord

LISTED = 20
"""At most this many sessions are listed when a name fits several."""


def _tests(wanted: str) -> tuple[tuple[str, Callable[[SessionRecord], bool]], ...]:
    """How `wanted` may name a session, tried in this order: the first that fits any
    session decides (an id is exact where a title is not)."""
    folded = wanted.casefold()
    return (
        ("an id starting", lambda record: record.id.startswith(wanted)),
        ("the title", lambda record: record.title == wanted),
        ("a title starting", lambda record: (record.title or "").casefold().startswith(folded)),
    )


def session_named(records: Iterable[SessionRecord], wanted: str) -> SessionRecord:
    """The one session whose id starts with `wanted`, else the one titled `wanted`, else
    the one whose title starts with it (case aside). KeyError, saying why, when none does
    or several do (those are listed, so that the user can pick one by its id)."""
    records = list(records)
    for how, fits in _tests(wanted):
        matches = [record for record in records if fits(record)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise KeyError(ambiguous(matches, how, wanted))
    raise KeyError(f"no session with an id or a title starting {wanted!r}")


def ambiguous(matches: Sequence[SessionRecord], how: str, wanted: str) -> str:
    """Why `wanted` names no one session, with the sessions it fits, one a line."""
    lines = [f"{len(matches)} sessions have {how} {wanted!r}; name one by its id:"]
    lines += [f"  {m.id}  {printable(m.title or '(untitled)')}" for m in matches[:LISTED]]
    if len(matches) > LISTED:
        lines.append(f"  …and {len(matches) - LISTED} more (`cockpit ls` lists them)")
    return "\n".join(lines)
