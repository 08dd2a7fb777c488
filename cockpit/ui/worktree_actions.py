"""What the user does with worktree sessions' worktrees from the screen: archive the
session on screen or restore it (each after a question), and the cleanup screen, whose
removal is previewed first, naming the worktrees with unmerged work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from cockpit.api import CleanupItem, EngineAPI, read_worktree, read_worktree_archive
from cockpit.text.textout import session_title
from cockpit.ui.dialog import OpenScreen
from cockpit.ui.failures import reported, reported_to
from cockpit.ui.one_line import clean_line
from cockpit.ui.screens.cleanup import CleanupScreen, removal_question
from cockpit.ui.screens.questions import ConfirmScreen
from cockpit.ui.sessions import Sessions


class WorktreeActions:
    """Archive, restore and clean up worktrees, through the engine."""

    def __init__(
        self,
        app: App[Any],
        engine: Callable[[], EngineAPI],
        sessions: Sessions,
        open_screen: OpenScreen,
    ) -> None:
        self.app = app
        self._engine = engine
        self._sessions = sessions
        self._open_screen = open_screen

    def _current(self) -> tuple[str, str, bool] | None:
        """The session on screen when it works in a worktree: its id, its title and
        whether its worktree is archived."""
        record = self._sessions.records.get(self._sessions.current or "")
        if record is None or read_worktree(record.info) is None:
            self.app.notify("This session works in no worktree of its own.", timeout=4)
            return None
        archived = read_worktree_archive(record.info) is not None
        return record.id, clean_line(session_title(record)), archived

    def archive(self) -> None:
        """Archive the worktree session on screen, after asking."""
        current = self._current()
        if current is None:
            return
        session, title, _ = current

        @reported_to(self.app, "archive the worktree")
        async def confirmed(yes: bool | None) -> None:
            if yes:
                said = await self._engine().archive_worktree(session)
                self.app.notify(clean_line(said), timeout=8, markup=False)

        question = (
            f"Archive “{title}”? Its agent and commands stop and its worktree is removed;"
            " the branch and the uncommitted work are kept, to restore."
        )
        self._open_screen(ConfirmScreen(question, "Archive", "Keep"), confirmed)

    @reported("restore the worktree")
    async def restore(self) -> None:
        """Restore the archived (or missing) worktree of the session on screen."""
        current = self._current()
        if current is not None:
            said = await self._engine().restore_worktree(current[0])
            self.app.notify(clean_line(said), timeout=8, markup=False)

    @reported("list the worktrees")
    async def cleanup(self) -> None:
        """The cleanup screen; the chosen worktrees go after a preview."""
        engine = self._engine()
        items = await engine.cleanup_plan()

        async def chosen(picked: list[CleanupItem] | None) -> None:
            if picked:
                self._open_screen(
                    ConfirmScreen(removal_question(picked), "Remove", "Keep"),
                    lambda yes: self._remove(picked, yes),
                )

        self._open_screen(CleanupScreen(items, engine.now()), chosen)

    @reported("remove the worktrees")
    async def _remove(self, picked: list[CleanupItem], yes: bool | None) -> None:
        if not yes:
            return
        force = any(item.unmerged for item in picked)  # named in the preview, and confirmed
        said = await self._engine().clean_worktrees([item.session for item in picked], force)
        self.app.notify(clean_line(" ".join(said)), timeout=8, markup=False)
