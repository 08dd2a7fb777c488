"""The transcript's rules, pure, so they are tested without an app: which live frames its
bounded window takes, which rows stay pinned, what an eviction leaves of the window's
bookkeeping, and where Up and Down go among the bubbles (which one takes the focus, how
far a bubble taller than the view scrolls first, where the view scrolls to show it).
The widget that applies them is `cockpit.ui.transcript.TranscriptView`; which bubbles an
eviction drops is `cockpit.ui.transcript_window.evict`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from textual.geometry import Region

from store import Bubble, Frame

# --- the window ---------------------------------------------------------------------------


def takes_frame(frame: Frame, last: int, detached: bool, live_turn: int | None) -> bool:
    """Whether a frame for a row the window does not hold belongs in it, `last` being the
    newest seq mounted."""
    if frame.seq <= last:
        return False  # an evicted row: it is in the store for later
    if not detached:
        return True
    # Reading far up: the live turn stays pinned, and a new prompt starts one; the
    # rest waits in the store until the user comes back down.
    return frame.kind == "user" or frame.turn == live_turn


def pinned_seqs(bubbles: Iterable[Bubble], live_turn: int | None) -> frozenset[int]:
    """The seqs of the live turn's rows: never evicted."""
    if live_turn is None:
        return frozenset()
    return frozenset(b.seq for b in bubbles if b.turn == live_turn)


def after_eviction(
    from_top: bool,
    boundary: int | None,
    mounted: Sequence[int],
    more_before: bool,
    gap_after: int | None,
) -> tuple[bool, int | None]:
    """The window's (`more_before`, `gap_after`) once an eviction unmounted rows: from the
    top, earlier rows are in the store again; from the bottom, the rows after `boundary`
    (the last one kept before those evicted; None when only the live turn is left) are
    missing, unless fewer were already. `mounted`: the seqs still mounted."""
    if from_top or boundary is None:
        more_before = True
    elif gap_after is None or boundary < gap_after:
        gap_after = boundary
    if gap_after is not None and mounted and gap_after < mounted[0]:
        gap_after = mounted[0]  # the rows before it come back as an earlier page
    return more_before, gap_after


# --- Up and Down --------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """What Up or Down does: scroll the view to `scroll_to` (within a focused bubble taller
    than the view), else move the focus to item `index`, which is out of range past the
    first or the last item."""

    scroll_to: int | None = None
    index: int = 0


def step(
    regions: Sequence[Region], focused: int | None, top: int, bottom: int, direction: int
) -> Step:
    """Down (`direction` 1) or Up (-1) among items at `regions`, the view showing lines
    `top` to `bottom`, item `focused` having the focus (None: none of them). A focused
    bubble taller than the view scrolls by half a view before the focus leaves it;
    without a focused item, the first item starting in view (going down) or the last one
    ending in view (going up) takes it."""
    height = bottom - top
    if focused is not None:
        region = regions[focused]
        if direction > 0 and region.bottom > bottom:
            return Step(scroll_to=min(top + max(height // 2, 1), region.bottom - height))
        if direction < 0 and region.y < top:
            return Step(scroll_to=max(top - max(height // 2, 1), region.y))
        return Step(index=focused + direction)
    if direction > 0:
        starts = [i for i, r in enumerate(regions) if top <= r.y < bottom]
        index = (
            starts[0]
            if starts
            else next((i for i, r in enumerate(regions) if r.bottom > top), len(regions) - 1)
        )
    else:
        ends = [i for i, r in enumerate(regions) if top < r.bottom <= bottom]
        index = (
            ends[-1]
            if ends
            else next((i for i in reversed(range(len(regions))) if regions[i].y < bottom), 0)
        )
    return Step(index=index)


def reveal(region: Region, top: int, bottom: int, direction: int) -> int:
    """Where the view's top goes to show the item at `region` (`top` when it shows
    already): all of it when it fits, else its first lines going down and its last lines
    going up."""
    height = bottom - top
    target = top
    if region.height <= height:
        if region.y < top:
            target = region.y
        elif region.bottom > bottom:
            target = region.bottom - height
    elif direction > 0:
        if not top <= region.y < bottom:
            target = region.y
    elif not top < region.bottom <= bottom:
        target = region.bottom - height
    return target
