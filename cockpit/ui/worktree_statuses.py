"""The worktree sessions' statuses the rail shows (branch, changed files, ahead and behind
its base), read from the engine in the background every few seconds and after each turn:
git's work is never on a key's path, and a key never waits for it."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App

from cockpit.api import EngineAPI, WorktreeStatus, read_worktree, read_worktree_archive
from cockpit.ui.sessions import Sessions

REFRESH_SECONDS = 5.0
"""How often the statuses may be read again while Cockpit is open."""
IDLE_SHARE = 9.0
"""After a round of every worktree, how many times its own length Cockpit waits before the
next periodic one: git then keeps at most a tenth of the time busy."""


def worktree_words(status: WorktreeStatus) -> str:
    """A worktree's state in a few cells, the counts first (a narrow rail cuts the branch,
    not them): `+3 ↑1 ↓0 cockpit/fix-1a2b`, or `missing` and the branch when its folder
    was deleted by hand."""
    if status.missing:
        return f"missing {status.branch}"
    return f"+{status.changed} ↑{status.ahead} ↓{status.behind} {status.branch}"


class WorktreeStatuses:
    """The last status read of each worktree session."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        changed: Callable[[], None],
    ) -> None:
        self.app = app
        """Runs the reads as workers."""
        self._engine = engine
        self._sessions = sessions
        self._changed = changed
        """Called once statuses read differ from those shown (the rail shows them again)."""
        self.statuses: dict[str, WorktreeStatus] = {}
        self._reading = False
        """A round of reads is under way."""
        self._wanted: set[str] | None = set()
        """What was asked for while a round ran (None: every session), read after it."""
        self._last_end = 0.0
        self._last_took = 0.0
        """When the last round of every worktree ended, and how long it took (monotonic)."""

    def words(self, session: str) -> str:
        """What the rail says of the session's worktree ("" for a session in none, or one
        whose status is not read yet; `archived` and its branch for an archived one)."""
        record = self._sessions.records.get(session)
        gone = read_worktree_archive(record.info) if record is not None else None
        worktree = read_worktree(record.info) if record is not None else None
        if gone is not None and worktree is not None:
            return f"{gone.state} {worktree.branch}"
        status = self.statuses.get(session)
        return worktree_words(status) if status is not None else ""

    @property
    def reading(self) -> bool:
        """True while a round of reads is under way."""
        return self._reading

    def tick(self) -> None:
        """The periodic read (every REFRESH_SECONDS): a round of every worktree, unless the
        last one ended too recently for its cost. On a big repository a round takes
        seconds of git's work; after it Cockpit waits IDLE_SHARE times as long, so git
        takes at most a small share of the machine away from the keys."""
        if self._reading:  # that round is the periodic read: none is queued behind it
            return
        if time.monotonic() >= self._last_end + IDLE_SHARE * self._last_took:
            self.refresh()

    def refresh(self, session: str | None = None) -> None:
        """Read the status of `session` (None: every worktree session) again, in the
        background. A round under way goes on (on a big repository one takes seconds, and
        one cut off by the next every time showed nothing); what is asked meanwhile is
        read once it ends."""
        if session is None:
            self._wanted = None
        elif self._wanted is not None:
            self._wanted.add(session)
        if not self._reading:
            self._start()

    def _start(self) -> None:
        wanted, self._wanted = self._wanted, set()
        sessions = [
            record.id
            for record in self._sessions.records.values()
            if read_worktree(record.info) is not None and (wanted is None or record.id in wanted)
        ]
        if sessions:
            self._reading = True
            work: Callable[[], object] = partial(self._read, sessions, wanted is None)
            self.app.run_worker(work, group="worktrees", exit_on_error=False)

    async def _read(self, sessions: list[str], every: bool) -> None:
        started = time.monotonic()
        try:
            for session in sessions:  # each shown as soon as it is read
                try:
                    status = await self._engine().worktree_status(session)
                except Exception:  # the session went away, the link blinked: next time
                    continue
                if status is None:
                    continue
                if self.statuses.get(session) != status:
                    self.statuses[session] = status
                    self._changed()
            gone = set(self.statuses) - set(sessions) if every else set()
            for session in gone:
                del self.statuses[session]
            if gone:
                self._changed()
        finally:
            if every:
                self._last_end, self._last_took = time.monotonic(), time.monotonic() - started
            self._reading = False
            if self._wanted is None or self._wanted:
                self._start()
