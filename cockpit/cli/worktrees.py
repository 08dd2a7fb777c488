"""`cockpit worktrees`: every worktree session's worktree, where the agents run (through
the service, or the engine in this process with --local): its path, session, branch and
base, the disk it takes, its uncommitted changes, how far ahead of and behind its base it
is, and whether it was deleted by hand."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from cockpit.api import WorktreeListing, WorktreeRequest
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE
from cockpit.cli.reaching import reached
from cockpit.text.sanitize import printable
from cockpit.text.textout import size_words


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """`cockpit worktrees [--json]` (its parser, which takes actions too)."""
    listing = commands.add_parser(
        "worktrees", help="list the worktrees of worktree sessions, with their state"
    )
    listing.add_argument("--json", action="store_true")
    return listing


def add_run_arguments(run: argparse.ArgumentParser) -> None:
    """`--worktree`, `--base`, `--branch` of `cockpit run` (and the TUI's `--worktree`)."""
    run.add_argument(
        "--worktree",
        action="store_true",
        help="work in a git worktree of its own, on a new branch (the folder must be in a"
        " git repository)",
    )
    run.add_argument("--base", metavar="REF", help="the new branch starts from REF (default HEAD)")
    run.add_argument("--branch", metavar="NAME", help="work on this existing branch instead")


def worktree_request(args: argparse.Namespace) -> WorktreeRequest | None:
    """The worktree the options ask for (None: none); ValueError for --base or --branch
    without --worktree."""
    base, branch = getattr(args, "base", None), getattr(args, "branch", None)
    if not args.worktree:
        if base is not None or branch is not None:
            raise ValueError("--base and --branch go with --worktree")
        return None
    return WorktreeRequest(base=base or "HEAD", branch=branch)


def worktree_line(item: WorktreeListing) -> str:
    """One worktree as `cockpit worktrees` prints it."""
    state = item.status
    if item.archived:
        where = f"{item.path} (archived)"
    elif state.missing:
        where = f"{item.path} (missing: deleted by hand)"
    else:
        counts = f"+{state.changed} ↑{state.ahead} ↓{state.behind}"
        where = f"{item.path}  {size_words(item.size)}  {counts}"
    return printable(f"{item.session}  {item.branch} (from {item.base})  {where}")


async def worktrees_command(args: argparse.Namespace, home: Path) -> int:
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        found = await engine.worktrees()
    finally:
        await engine.close()
    if args.json:
        print(json.dumps([asdict(item) for item in found], indent=2))
        return EXIT_OK
    if not found:
        print("No worktree sessions. Start one with: cockpit run --worktree PROMPT")
    for item in found:
        print(worktree_line(item))
    return EXIT_OK
