"""Whether the session rail shows: the width decides, unless the user's last Ctrl+B went
against it. No Textual here, so the rule is tested without an app."""

from __future__ import annotations

RAIL_HIDES_BELOW = 80
"""Below this many columns the rail hides by itself: at 60 columns its 22 would leave the
transcript too little."""


def rail_by_width(width: int) -> bool:
    """What the width alone decides: shown from `RAIL_HIDES_BELOW` columns on."""
    return width >= RAIL_HIDES_BELOW


def rail_shown(width: int, choice: bool | None) -> bool:
    """Whether the rail shows at `width`: the user's choice when there is one (None when
    the rail follows the width)."""
    return rail_by_width(width) if choice is None else choice


def choice_after_toggle(width: int, choice: bool | None) -> bool | None:
    """The user's choice after Ctrl+B at `width`: the opposite of what shows now, kept only
    while it goes against the width. Ctrl+B back to what the width would show returns the
    rail to following the width, so showing it on a narrow terminal and hiding it again
    does not keep it hidden once the terminal grows."""
    wanted = not rail_shown(width, choice)
    return None if wanted == rail_by_width(width) else wanted
