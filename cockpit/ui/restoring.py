"""`/checkpoints`: a worktree session's checkpoints, and putting its files back as one
holds them once the user has read what that overwrites and deletes and said yes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cockpit.text.checkpoints import plan_lines
from cockpit.ui.failures import reported_to
from cockpit.ui.screens.checkpoints import CheckpointsScreen
from cockpit.ui.screens.questions import ConfirmScreen

if TYPE_CHECKING:
    from cockpit.ui.slash import SlashTarget

NO_CHECKPOINTS = (
    "No checkpoints: a session in its own worktree gets one as each of its turns starts and ends."
)


async def show_checkpoints(app: SlashTarget, session: str, title: str) -> None:
    """List the session's checkpoints; the one picked is restored after a confirmation."""
    checkpoints = await app.engine.checkpoints(session)
    if not checkpoints:
        app.notify(NO_CHECKPOINTS, severity="warning", markup=False)
        return

    @reported_to(app, "put the files back")
    async def picked(checkpoint: str | None) -> None:
        if checkpoint is None:
            return
        plan = await app.engine.restore_preview(session, checkpoint)
        if plan.refusal is not None:
            app.notify(plan.refusal, severity="warning", markup=False)
            return

        @reported_to(app, "put the files back")
        async def answered(yes: bool | None) -> None:
            if not yes:
                return
            made = await app.engine.restore(session, checkpoint)
            said = f"Files put back as checkpoint {checkpoint}; restore checkpoint {made} to undo."
            app.notify(said, timeout=6, markup=False)

        question = f"Put the files back as checkpoint {checkpoint} holds them?"
        details = plan_lines(plan, limit=6)
        app.open_screen(ConfirmScreen(question, "Restore", "Keep", details=details), answered)

    app.open_screen(CheckpointsScreen(title, checkpoints), picked)
