"""A client's view of one session, kept the way the UI keeps it, without the UI: frames
folded as they come, and on each `ResyncEvent` the tail page read afresh (a read
replaces what was held), every event taken one at a time in the order it came, as the
app's message queue takes them. What it ends with is compared with the stored rows."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, deque

from cockpit.api import EngineAPI, EngineEvent, FramesEvent, ResyncEvent, Row
from store import ViewTranscript


class ShownView:
    """The view of `session` on a client of `engine` (which must show it)."""

    def __init__(self, engine: EngineAPI, session: str) -> None:
        self.engine = engine
        self.session = session
        self.view = ViewTranscript()
        self.resyncs = 0
        """ResyncEvents taken (each one read the tail page again)."""
        self.reads = 0
        """Tail pages read (the first, as a session is shown, and one per resync)."""
        self.failed_reads = 0
        """Reads cut short by a cut (the next resync reads again)."""
        self.frames_events: Counter[str] = Counter()
        """FramesEvents received, by session."""
        self.story: deque[str] = deque(maxlen=40)
        """The last reads and resyncs, with the lengths they left (for a failure to say
        what happened: a rare one under load cannot be run again at will)."""
        self._queue: asyncio.Queue[EngineEvent | None] = asyncio.Queue()
        self._taking = False
        self._queue.put_nowait(None)  # first the tail page, as the UI shows a session
        self._unsubscribe = engine.subscribe(self._queue.put_nowait)
        self._task = asyncio.ensure_future(self._take())

    async def _take(self) -> None:
        while True:
            self._taking = False
            event = await self._queue.get()
            self._taking = True
            if isinstance(event, FramesEvent):
                self.frames_events[event.session] += 1
                if event.session == self.session:
                    for frame in event.frames:
                        self.view.fold(frame)
            elif event is None or isinstance(event, ResyncEvent):
                self.resyncs += event is not None
                try:
                    page = await self.engine.page(self.session)
                except (ConnectionError, OSError) as error:
                    self.story.append(f"read failed: {error}")
                    self.failed_reads += 1  # cut again: attaching again tells us to read
                    continue
                self.reads += 1
                self.view = ViewTranscript()
                self.view.merge_page(page.rows)
                held = [len(b.text) for b in self.view]
                self.story.append(f"read after {event or 'showing'}: {held}")

    def told(self) -> str:
        """The story so far, a line each, with what the view holds now."""
        now = [(b.key, len(b.text), "stale" if b.stale else "") for b in self.view]
        return "\n".join([*self.story, f"now {now}"])

    @property
    def idle(self) -> bool:
        """True when every event received so far was taken."""
        return self._queue.empty() and not self._taking

    def matches(self, rows: list[Row]) -> bool:
        """True when the view holds exactly `rows`: every bubble, every character."""
        return self.shown() == expected(rows) and not any(b.stale for b in self.view)

    def shown(self) -> list[tuple[str, str, str]]:
        return [(bubble.key, bubble.kind, bubble.text) for bubble in self.view]

    async def close(self) -> None:
        self._unsubscribe()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


def expected(rows: list[Row]) -> list[tuple[str, str, str]]:
    """What a view of `rows` must hold."""
    return [(row.key, row.kind, row.text) for row in rows]


def difference(view: list[tuple[str, str, str]], rows: list[tuple[str, str, str]]) -> str:
    """Where a view and the rows part, in a line (the texts are 50 KB long)."""
    if len(view) != len(rows):
        return (
            f"{len(view)} bubbles against {len(rows)} rows: "
            f"{[(key, kind, len(text), text[:60]) for key, kind, text in view]} against "
            f"{[(key, kind, len(text), text[:60]) for key, kind, text in rows]}"
        )
    for (key, kind, text), (row_key, row_kind, row_text) in zip(view, rows, strict=True):
        if (key, kind) != (row_key, row_kind):
            return f"bubble {key} ({kind}) where row {row_key} ({row_kind})"
        if text != row_text:
            at = next(
                (i for i, (a, b) in enumerate(zip(text, row_text, strict=False)) if a != b),
                min(len(text), len(row_text)),
            )
            return (
                f"{kind} {key}: {len(text)} characters against {len(row_text)}, first "
                f"difference at {at}: {text[at : at + 20]!r} against {row_text[at : at + 20]!r}"
            )
    return "equal"
