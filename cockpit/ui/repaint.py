"""How often a streaming reply repaints, and what a repaint shows: the pacing rules of the
live reply (`RepaintPacer`), the frame of lines a repaint puts on screen (`ReplyLines`)
and the lines that differ between two frames (`changed_lines`). No widget here: the reply
widget (`cockpit.ui.bubbles.AgentBubble`) asks these when text arrives and when the
screen draws it, so the rules are tested without an app.

A repaint renders the reply's open tail, then asks the screen for as little as it can:
the lines that differ from the frame on screen when the reply kept its height, a layout
only when it got taller or shorter. Repaints come at most REPAINT_RATE times a second,
and less often when they are expensive: the wait after one is its cost over PAINT_SHARE,
the cost being the time to render it, the screen's update that showed it, and how late
it started (the app was busy), at most SLOWEST_REPAINT unless the rendering alone costs
more than PAINT_SHARE of that.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import islice

from textual.strip import Strip

REPAINT_RATE = 30
"""Most redraws a second of a streaming reply."""

PAINT_SHARE = 0.25
"""The share of the time a streaming reply's redraws may take: when one costs more (a
long open block to render again, a busy screen, a busy machine), the next waits longer,
so input and the other sessions are never starved."""

SLOWEST_REPAINT = 0.25
"""The longest wait, in seconds, between two redraws of a streaming reply, unless
rendering it alone takes more than PAINT_SHARE of that (a very long open block, such as
a huge code block): then the wait is the rendering's cost over PAINT_SHARE, so the
rendering never takes the whole loop, and a reply that keeps growing costs time in
proportion to its length (each rendering is of a tail a constant factor longer than the
last one's), not to its square."""


class RepaintPacer:
    """When a streaming reply may repaint next, from what its recent repaints cost: the
    time to render each, the screen's update that showed it, and how late it started."""

    def __init__(self) -> None:
        self.painted = 0.0
        """When the last repaint started."""
        self.due = 0.0
        """When the repaint waiting for its timer is due."""
        self.interval = 1 / REPAINT_RATE
        """The wait between two repaints, from what recent ones cost."""
        self.paint_cost: float | None = None
        """What the last repaint cost before the screen's update (None: none to time)."""
        self.render_cost = 0.0
        """The CPU time rendering the last repaint's lines took (CPU, so that a machine
        busy with other work does not stretch it): the next repaint waits at least that
        over PAINT_SHARE (see SLOWEST_REPAINT)."""
        self.update_started: float | None = None
        """When the screen first asked for lines after the last repaint."""
        self.update_ended = 0.0
        """When it last asked for one in that same update."""
        self.in_update = False

    def next_due(self) -> float:
        """When the next repaint may come (it is now due, if that has passed)."""
        self.due = self.painted + max(self.interval, self.render_cost / PAINT_SHARE)
        return self.due

    def lateness(self) -> float:
        """How long after it was due a repaint starts now (the app was busy)."""
        return max(time.monotonic() - self.due, 0.0)

    def start(self) -> float:
        """A repaint starts now: what the last one cost sets the wait before the next."""
        started = self.painted = time.monotonic()
        self.timed()
        return started

    def asked(self) -> bool:
        """The screen asks for the frame's lines (its height, or a line): the update that
        shows the last repaint runs from the first such call to the last one before the
        event loop moves on. True at the first call: the caller then schedules
        `update_over` for after the screen's update (it runs in one go)."""
        now = time.monotonic()
        if self.update_started is None:
            self.update_started = self.update_ended = now
            self.in_update = True
            return True
        if self.in_update:
            self.update_ended = now
        return False

    def update_over(self) -> None:
        """The screen's update is over: later calls belong to another one."""
        self.in_update = False

    def timed(self) -> None:
        """What the last repaint cost (rendering, and the screen's update that showed it)
        sets the wait before the next one."""
        if self.paint_cost is not None:
            cost = self.paint_cost
            if self.update_started is not None:
                cost += self.update_ended - self.update_started
            wait = min(max(cost / PAINT_SHARE, 1 / REPAINT_RATE), SLOWEST_REPAINT)
            self.interval = (self.interval + wait) / 2
        self.paint_cost = self.update_started = None


def changed_lines(before: ReplyLines, after: ReplyLines, stable: int) -> range:
    """The lines of `after` that differ from `before` (two frames of the same height),
    the first `stable` lines known to be the same (sealed blocks cannot change): one
    range from the first to the last changed line, empty when none changed."""
    first, last = stable, len(after) - 1
    while first <= last and after[first] == before[first]:
        first += 1
    while last >= first and after[last] == before[last]:
        last -= 1
    return range(first, last + 1)


class ReplyLines:
    """A reply's lines at one repaint, made without copying them: the sealed blocks' lines
    (a list that only grows while the width stays the same: this keeps how many it had),
    a blank line, and the open tail's lines. So a repaint's frame costs the tail, not the
    whole reply, however long it has grown."""

    __slots__ = ("_count", "_gap", "_sealed", "_tail")

    def __init__(self, sealed: list[Strip], tail: list[Strip]) -> None:
        self._sealed = sealed
        self._count = len(sealed)
        self._gap = 1 if sealed and tail else 0
        self._tail = tail

    def __len__(self) -> int:
        return self._count + self._gap + len(self._tail)

    def __getitem__(self, y: int) -> Strip:
        """Line `y` (from the end when negative, as in a list)."""
        if y < 0:
            y += len(self)
        if not 0 <= y < len(self):
            raise IndexError(y)
        if y < self._count:
            return self._sealed[y]
        y -= self._count + self._gap
        return self._tail[y] if y >= 0 else _GAP

    def __iter__(self) -> Iterator[Strip]:
        yield from islice(self._sealed, self._count)
        yield from [_GAP] * self._gap
        yield from self._tail


_GAP = Strip.blank(0)
"""The blank line between two blocks."""
