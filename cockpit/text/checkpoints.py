"""Checkpoints and a restore's plan in words, the same on the command line and on screen."""

from __future__ import annotations

from cockpit.api import Checkpoint, RestorePlan

LISTED = 12
"""Files of one kind a plan names before it says how many more there are."""


def checkpoint_when(checkpoint: Checkpoint) -> str:
    """When a checkpoint was made, in words: "turn 3 start", "before a restore"."""
    if checkpoint.phase == "restore":
        return f"before a restore (after turn {checkpoint.turn})"
    return f"turn {checkpoint.turn} {checkpoint.phase}"


def files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def checkpoint_changes(checkpoint: Checkpoint) -> str:
    """What changed since the checkpoint before it, in words: at a turn's end the turn's
    own changes, at a start or before a restore what changed outside a turn."""
    if checkpoint.phase == "end":
        return f"{files(checkpoint.changed)} changed by the turn"
    return f"{files(checkpoint.changed)} changed outside a turn"


def plan_lines(plan: RestorePlan, limit: int = LISTED) -> list[str]:
    """What a restore will do, a line per file (at most `limit` of each kind); the refusal
    first when there is one."""
    lines = [plan.refusal] if plan.refusal else []
    for paths, what in (
        (plan.overwrite, "overwrite"),
        (plan.delete, "delete"),
        (plan.create, "write back"),
        (plan.kept, "keep (ignored now)"),
    ):
        lines += [f"{what}: {path}" for path in paths[:limit]]
        if len(paths) > limit:
            lines.append(f"{what}: {len(paths) - limit} more")
    if not (plan.overwrite or plan.delete or plan.create):
        lines.append(f"The files are already as checkpoint {plan.checkpoint} holds them.")
    return lines
