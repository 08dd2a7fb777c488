"""A new worktree made ready as its repository asks: the files copied in, the ports
given, and the commands to run in it first, as `!commands` the user sees (the submodules
fetched; the setup command, only when the user approved its exact text)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from cockpit.engine.worktrees.approvals import Approvals
from cockpit.engine.worktrees.preparing import has_submodules, prepare, read_project
from cockpit.engine.worktrees.project import PROJECT_FILE
from cockpit.records import Worktree

SUBMODULES = "git submodule update --init --recursive"
"""Cockpit's own first command in a worktree whose repository has submodules."""


@dataclass(frozen=True)
class Readied:
    """A worktree made ready: as stored, what the user should read, what runs in it."""

    worktree: Worktree
    notes: tuple[str, ...]
    commands: tuple[str, ...]


def unapproved_setup(command: str) -> str:
    """The note for a setup command that was not run."""
    return (
        f"The setup command of {PROJECT_FILE} was not run: you have not approved it for this"
        f" repository. It is: {command}. Approve it in the new-session dialog, or with"
        " `cockpit approve` in the repository, and it runs in new worktrees."
    )


async def ready(made: Worktree, approvals: Approvals, taken_ports: Collection[int]) -> Readied:
    """Copy in, give ports, and say what runs first in the worktree `made`."""
    config = await read_project(made.repo, made.base_commit)
    worktree, notes = await prepare(made, config, taken_ports)
    commands: list[str] = []
    if await has_submodules(worktree.path):
        commands.append(SUBMODULES)
    if config.setup is not None:
        if approvals.approved(worktree.repo, "setup", config.setup):
            commands.append(config.setup)
        else:
            notes.append(unapproved_setup(config.setup))
    return Readied(worktree, tuple(notes), tuple(commands))
