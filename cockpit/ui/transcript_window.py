"""Which bubbles a bounded transcript window keeps: the rule behind the view's eviction,
pure so that it is tested without an app."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Eviction:
    """Which mounted bubbles a window drops, by seq."""

    seqs: tuple[int, ...]
    from_top: bool


def evict(
    mounted: Sequence[int], pinned: frozenset[int], limit: int, keep_bottom: bool
) -> Eviction:
    """Bubbles to unmount so that at most `limit` stay, `mounted` being in seq order.

    Near the bottom (`keep_bottom`) the oldest go, so a long turn never scrolls itself
    away. Reading far up, the newest go instead and the window detaches from the tail;
    the view then says new output is below and reads it again when the user returns.
    Either way the pinned ones (the live turn) stay, so its frames keep landing in the
    view while the user reads history: only the rest counts against `limit`. Near the
    bottom a live turn that alone holds more than `limit` rows loses its oldest too (an
    agent sent thousands of notices in one turn, and each stayed mounted).
    """
    excess = len(mounted) - limit
    if excess <= 0:
        return Eviction((), keep_bottom)
    candidates = [seq for seq in mounted if seq not in pinned]
    if not keep_bottom:
        candidates.reverse()
    elif len(candidates) < excess:
        candidates = list(mounted)
    return Eviction(tuple(candidates[:excess]), keep_bottom)
