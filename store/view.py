"""The view-side transcript: how any view folds frames and pages into bubbles.

Pure and shared: the TUI builds its bubbles with it, and the tests rebuild the
transcript from an engine's live frames with it and compare the result with the rows
the store persisted, bubble for bubble and character for character.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeAlias

from store.model import Frame, Row
from store.pieces import Pieces


class Bubble:
    """What a view shows for one row. One key = one row = one bubble.

    Streamed text is kept as pieces (`store.pieces`) and joined only when read, so
    folding thousands of deltas into a long reply costs time in proportion to its length,
    not its square, as long as no one reads the whole text after each of them: the fold
    reports what each frame appended (`Change`) for that.
    """

    __slots__ = ("_pieces", "key", "kind", "length", "payload", "seq", "stale", "turn")

    def __init__(
        self,
        key: str,
        seq: int,
        kind: str,
        turn: int,
        text: str,
        payload: Mapping[str, Any] | None = None,
        stale: bool = False,
    ) -> None:
        self.key = key
        self.seq = seq
        self.kind = kind
        self.turn = turn
        self._pieces = Pieces(text)
        self.length = len(text)
        """The length of the text, without reading it."""
        self.payload = payload
        self.stale = stale
        """True when live frames arrived whose head this view never saw: read the row."""

    @property
    def text(self) -> str:
        """The whole text (a join: not once per frame)."""
        return self._pieces.text

    @text.setter
    def text(self, text: str) -> None:
        self._pieces = Pieces(text)
        self.length = len(text)

    def extend(self, text: str) -> None:
        """Append streamed text."""
        self._pieces.append(text)
        self.length += len(text)

    def __repr__(self) -> str:
        return f"Bubble({self.key!r}, seq={self.seq}, kind={self.kind!r}, length={self.length})"


Change: TypeAlias = tuple[Bubble, str | None]
"""What folding one frame did: the bubble, and the text the frame added at its end ("" when
nothing was: the bubble went stale, or a read brought the same text), or None when the
text was replaced by one that does not extend it (a read is the truth). A view shows
exactly that, without reading the whole text back: for a reply streamed in thousands of
pieces, joining it after each one made its cost grow with the square of its length. A
plain tuple, because one is made per streamed token."""


class ViewTranscript:
    """Bubbles by key, kept in seq order.

    Live frames are guarded by LENGTH, never by seq: a folded row keeps its first seq
    while it grows, so a seq guard would drop every chunk after the first.
    """

    def __init__(self) -> None:
        self._by_key: dict[str, Bubble] = {}
        self._order: list[tuple[int, str]] = []

    def __len__(self) -> int:
        return len(self._by_key)

    def __iter__(self) -> Iterator[Bubble]:
        return (self._by_key[key] for _, key in self._order)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def get(self, key: str) -> Bubble | None:
        """The bubble with this key, if the view holds it."""
        return self._by_key.get(key)

    def texts(self) -> list[str]:
        """Every bubble's text in seq order."""
        return [bubble.text for bubble in self]

    def _add(self, bubble: Bubble) -> Bubble:
        self._by_key[bubble.key] = bubble
        insort(self._order, (bubble.seq, bubble.key))
        return bubble

    def apply(self, frame: Frame) -> Bubble | None:
        """Fold one frame; return the bubble it changed, or None for a duplicate."""
        change = self.fold(frame)
        return change[0] if change is not None else None

    def fold(self, frame: Frame) -> Change | None:
        """Fold one frame; return what it changed, or None for a duplicate.

        A delta frame appends only what is missing: `missing = n - len(held)`; nothing
        when `missing <= 0`, else `part[-missing:]` (which also covers a frame whose head
        the view already holds). A frame that is missing more than it carries marks the
        bubble stale instead of guessing. A frame without delta replaces the text.
        """
        bubble = self._by_key.get(frame.key)
        if not frame.delta:
            return self._replace(bubble, frame)
        if bubble is None:
            bubble = self._add(Bubble(frame.key, frame.seq, frame.kind, frame.turn, ""))
        missing = frame.n - bubble.length
        if missing <= 0:
            return None
        if missing > len(frame.part):
            bubble.stale = True
            return bubble, ""
        appended = frame.part[-missing:]
        bubble.extend(appended)
        return bubble, appended

    def reread(self, row: Row) -> Change:
        """Replace a bubble's text with its row, read again from the store (a stale bubble,
        whose head this view never saw)."""
        return self._replace(self._by_key.get(row.key), Frame.read(row))

    def _replace(self, bubble: Bubble | None, frame: Frame) -> Change:
        """A read: the frame's text is the truth. Reported as appended text when it
        extends what the bubble held (reading the held text once: a read carries the
        whole text anyway)."""
        if bubble is None:
            bubble = Bubble(frame.key, frame.seq, frame.kind, frame.turn, frame.part, frame.payload)
            return self._add(bubble), frame.part
        held = bubble.text
        appended = frame.part[len(held) :] if frame.part.startswith(held) else None
        bubble.text = frame.part
        bubble.payload = frame.payload
        bubble.stale = False
        return bubble, appended

    def read(self, rows: Iterable[Row]) -> None:
        """Apply stored rows as reads: the store is the truth, so each replaces its bubble."""
        for row in rows:
            self.apply(Frame.read(row))

    def merge_page(self, rows: Iterable[Row]) -> None:
        """Merge a page loaded from the store into what is shown, by key: the longer text
        wins, so a message straddling a page edge, or still streaming, stays one bubble."""
        for row in rows:
            bubble = self._by_key.get(row.key)
            if bubble is None:
                self._add(Bubble(row.key, row.seq, row.kind, row.turn, row.text, row.payload))
            elif len(row.text) > bubble.length or (bubble.stale and len(row.text) == bubble.length):
                bubble.text = row.text
                bubble.payload = row.payload
                bubble.stale = False
            elif bubble.payload is None and row.payload is not None:
                bubble.payload = row.payload

    def drop(self, keys: Iterable[str]) -> None:
        """Forget bubbles (a view evicting far-away pages)."""
        for key in keys:
            bubble = self._by_key.pop(key, None)
            if bubble is not None:
                index = bisect_left(self._order, (bubble.seq, key))
                del self._order[index]


def coalesce(frames: Iterable[Frame]) -> list[Frame]:
    """Join each run of live frames that continue one another (one row, each starting
    where the one before it ended) into one frame carrying their text. A view folds the
    joined frame to the same text, staleness included, as it folds the run: `fold` reads
    a delta's last length and the tail of its text, and a run's joined tail is the tail of
    its last frames. Frames sent together then cost one encoding, one decoding and one
    fold instead of one per streamed token. Every other frame passes as it is, in order."""
    runs: list[list[Frame]] = []
    for frame in frames:
        if runs and _continues(runs[-1][-1], frame):
            runs[-1].append(frame)
        else:
            runs.append([frame])
    return [_joined(run) for run in runs]


def _continues(before: Frame, frame: Frame) -> bool:
    """Whether `frame` carries the text right after `before`'s, in the same row."""
    return (
        frame.delta
        and before.delta
        and frame.key == before.key
        and frame.session == before.session
        and frame.n == before.n + len(frame.part)
        and frame.payload is None
        and before.payload is None
    )


def _joined(run: list[Frame]) -> Frame:
    """One frame for a run of continuing frames."""
    if len(run) == 1:
        return run[0]
    return run[0]._replace(part="".join(frame.part for frame in run), n=run[-1].n)
