"""Checkpoints of a worktree session's files, a turn at a time, in git (see `repository`)."""

from cockpit.api import Checkpoint, FileChange, RestorePlan
from cockpit.engine.checkpoints.git import GitError
from cockpit.engine.checkpoints.repository import Checkpoints

__all__ = ["Checkpoint", "Checkpoints", "FileChange", "GitError", "RestorePlan"]
