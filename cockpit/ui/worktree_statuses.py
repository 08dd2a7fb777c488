"""The worktree sessions' statuses the rail shows (branch, changed files, ahead and behind
its base), read from the engine in the background every few seconds and after each turn:
git's work is never on a key's path, and a key never waits for it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App

from cockpit.api import EngineAPI, WorktreeStatus, read_worktree, read_worktree_archive
from cockpit.ui.sessions import Sessions

REFRESH_SECONDS = 5.0
"""How often the statuses are read again while Cockpit is open."""


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
        self._again = False
        """Another round was asked for meanwhile: it follows this one."""

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

    def refresh(self) -> None:
        """Read every worktree session's status again, in the background. A round under
        way goes on (on a big repository one takes seconds, and one cut off by the next
        every time showed nothing); another follows it once it ends."""
        if self._reading:
            self._again = True
            return
        sessions = [
            record.id
            for record in self._sessions.records.values()
            if read_worktree(record.info) is not None
        ]
        if sessions:
            self._reading = True
            work: Callable[[], object] = partial(self._read, sessions)
            self.app.run_worker(work, group="worktrees", exit_on_error=False)

    async def _read(self, sessions: list[str]) -> None:
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
            gone = set(self.statuses) - set(sessions)
            for session in gone:
                del self.statuses[session]
            if gone:
                self._changed()
        finally:
            self._reading = False
            if self._again:
                self._again = False
                self.refresh()
