"""`cockpit worktrees clean`, `cockpit archive` and `cockpit restore-worktree`: the
lifecycle of worktree sessions where the agents run. The cleanup prints its plan first,
asks before it removes anything (unless --yes), and never removes unmerged work unless
--force is given explicitly."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cockpit.api import CleanupItem, EngineAPI
from cockpit.cli.exits import EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.cli.reaching import reached
from cockpit.cli.service import confirmed
from cockpit.text.sanitize import printable
from cockpit.text.textout import age, size_words


def add_parsers(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    worktrees: argparse.ArgumentParser,
) -> None:
    """`cockpit worktrees clean`, `cockpit archive`, `cockpit restore-worktree`."""
    actions = worktrees.add_subparsers(dest="action", metavar="ACTION")
    clean = actions.add_parser(
        "clean", help="remove worktrees (merged ones, or those you confirm), after a preview"
    )
    clean.add_argument(
        "--merged", action="store_true", help="only worktrees whose removal loses nothing"
    )
    clean.add_argument("--dry-run", action="store_true", help="print the plan, remove nothing")
    clean.add_argument("--yes", action="store_true", help="remove without asking")
    clean.add_argument(
        "--force",
        action="store_true",
        help="remove unmerged work too (commits not in the base, uncommitted files): lost",
    )
    archive = commands.add_parser(
        "archive",
        help="archive a worktree session: stop it, keep its branch and uncommitted work,"
        " remove its worktree",
    )
    archive.add_argument("session", help="a session id, or the start of one")
    restore = commands.add_parser(
        "restore-worktree",
        help="make an archived (or deleted) worktree again from its branch, with its work",
    )
    restore.add_argument("session", help="a session id, or the start of one")


def plan_line(item: CleanupItem, now: float) -> str:
    """One worktree of the cleanup's plan."""
    where = "archived" if item.archived else "missing" if item.missing else size_words(item.size)
    if item.archived and item.size:
        where += f", {size_words(item.size)}"
    state = f"unmerged: {', '.join(item.unmerged)}" if item.unmerged else "merged"
    if not item.unmerged and not item.merged:
        state = "nothing to lose"
    active = age(max(0.0, now - item.last_activity))
    return printable(
        f"{item.session}  {item.branch} (into {item.base})  {where}  {state}  active {active} ago"
    )


def chosen(items: list[CleanupItem], force: bool) -> list[CleanupItem]:
    """The worktrees a cleanup removes: those that lose nothing, and with `force` all."""
    return [item for item in items if force or not item.unmerged]


def question(removed: list[CleanupItem]) -> str:
    """What the cleanup asks before it removes, saying how much unmerged work goes."""
    count = len(removed)
    lost = sum(1 for item in removed if item.unmerged)
    asked = f"Remove {count} worktree{'s' if count != 1 else ''}"
    if lost:
        asked += f", {lost} of them with unmerged work that will be lost for good"
    return asked + "?"


async def clean_command(args: argparse.Namespace, home: Path) -> int:
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        return await _clean(engine, args)
    finally:
        await engine.close()


async def _clean(engine: EngineAPI, args: argparse.Namespace) -> int:
    items = await engine.cleanup_plan(args.merged)
    if not items:
        print("No worktree to clean." if args.merged else "No worktree sessions.")
        return EXIT_OK
    now = time.time()
    for item in items:
        print(plan_line(item, now))
    removed = chosen(items, args.force)
    kept = len(items) - len(removed)
    if kept:
        stay = "stays" if kept == 1 else "stay"
        print(f"{kept} with unmerged work {stay}: --force removes them too.")
    if args.dry_run:
        print("Nothing was removed (--dry-run).")
        return EXIT_OK
    if not removed:
        return EXIT_OK
    if not args.yes and not sys.stdin.isatty():
        print("cockpit: nothing was removed: --yes removes without asking.", file=sys.stderr)
        return EXIT_USAGE
    if not args.yes and not confirmed(question(removed)):
        print("Nothing was removed.")
        return EXIT_OK
    for line in await engine.clean_worktrees([item.session for item in removed], args.force):
        print(printable(line))
    return EXIT_OK


async def lifecycle_command(args: argparse.Namespace, home: Path) -> int:
    """`cockpit archive SESSION` or `cockpit restore-worktree SESSION`."""
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        session = (await engine.find_session(args.session)).id
        if args.command == "archive":
            said = await engine.archive_worktree(session)
        else:
            said = await engine.restore_worktree(session)
    except KeyError as error:
        print(f"cockpit: {error.args[0]}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as error:
        print(f"cockpit: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await engine.close()
    print(printable(said))
    return EXIT_OK
