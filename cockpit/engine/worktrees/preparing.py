"""Readying a new worktree as its repository asks (`.cockpit.toml`, read at the base from
the user's checkout): the files copied in and the session's free ports. The setup
command is the engine's to run, once approved (`cockpit.engine.worktrees.approvals`)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Collection
from pathlib import Path

from cockpit.engine.worktrees import git
from cockpit.engine.worktrees.copying import copy_in
from cockpit.engine.worktrees.create import commit_of, top_of
from cockpit.engine.worktrees.ports import pick_ports
from cockpit.engine.worktrees.project import PROJECT_FILE, ProjectConfig, parse_project
from cockpit.records import Worktree, read_worktree

PROJECT_LIMIT = 64 * 1024
"""The largest `.cockpit.toml` read (bytes)."""


async def read_project(top: Path | str, commit: str) -> ProjectConfig:
    """What `.cockpit.toml` at `commit` of the checkout `top` asks (nothing when it has
    none). The committed file, never one in a worktree an agent writes."""
    code, data, _ = await git.run(
        top, "cat-file", "blob", f"{commit}:{PROJECT_FILE}", check=False, locks=False
    )
    if code != 0:
        return ProjectConfig()
    if len(data) > PROJECT_LIMIT:
        return ProjectConfig(problems=(f"{PROJECT_FILE} is over {PROJECT_LIMIT} bytes: not read",))
    return parse_project(data.decode("utf-8", "replace"))


async def session_project(cwd: str, info: object) -> tuple[str, ProjectConfig] | None:
    """The checkout a session works in (its top) and what its `.cockpit.toml` asks: as
    committed at the base for a worktree session, at HEAD for one in the checkout
    itself. None: the session is in no repository (or git cannot say)."""
    worktree = read_worktree(info)
    try:
        if worktree is not None:
            return worktree.repo, await read_project(worktree.repo, worktree.base_commit)
        top = await top_of(Path(cwd))
        return str(top), await read_project(top, await commit_of(top, "HEAD"))
    except (ValueError, git.GitError, OSError):
        return None


async def prepare(
    made: Worktree, config: ProjectConfig, taken_ports: Collection[int]
) -> tuple[Worktree, list[str]]:
    """Copy in what `config` lists and give the session its ports: the worktree as it
    now is, and what the user should read (what was left out, and why)."""
    copied = await asyncio.to_thread(copy_in, Path(made.repo), Path(made.path), config.copy)
    ports = await asyncio.to_thread(pick_ports, config.ports, taken_ports)
    notes = [*config.problems, *copied.problems]
    if len(ports) < config.ports:
        notes.append(f"Only {len(ports)} of {config.ports} free ports were found.")
    return dataclasses.replace(made, copied=copied.paths, ports=ports), notes


async def has_submodules(path: str) -> bool:
    """True when the worktree's repository has submodules to fetch."""
    return await asyncio.to_thread(os.path.isfile, os.path.join(path, ".gitmodules"))
