"""`cockpit changes`, `commit`, `merge`, `discard` and `push`: a worktree session's work
reviewed and brought home from the command line, where the agents run (through the
service, or the engine in this process with --local). Each finds its session by the start
of its id, does one thing and says what it did, or why not, in a sentence."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cockpit.api import EngineAPI, FileChange, MergeResult
from cockpit.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_SERVICE, EXIT_USAGE
from cockpit.cli.reaching import reached
from cockpit.text.diffstat import line_counts
from cockpit.text.sanitize import printable

COMMANDS = frozenset({"changes", "commit", "merge", "discard", "push"})

MARKS = {"added": "A", "modified": "M", "deleted": "D"}


def add_parsers(commands: Any) -> None:
    """The five commands' parsers."""
    changes = commands.add_parser(
        "changes",
        help="list the files a worktree session changed against its base",
        description="Every file a worktree session changed against its base: committed on"
        " its branch, staged, unstaged or untracked (ignored files never).",
    )
    changes.add_argument("session", help="a session id, or the start of one")
    form = changes.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="each file with both its texts")
    form.add_argument("--patch", action="store_true", help="print the diffs, unified")
    commit = commands.add_parser(
        "commit", help="commit everything in a worktree session's worktree on its branch"
    )
    commit.add_argument("session", help="a session id, or the start of one")
    commit.add_argument("-m", "--message", required=True, help="the commit's message")
    merge = commands.add_parser(
        "merge",
        help="merge a worktree session's branch into its base branch, in your checkout",
        description="Test the merge first (git 2.38's merge-tree): a conflict changes"
        " nothing. Done only when your checkout is clean and has the base branch checked"
        " out: a fast-forward when it can be, else a merge commit.",
    )
    merge.add_argument("session", help="a session id, or the start of one")
    merge.add_argument("--ff-only", action="store_true", help="refuse unless it fast-forwards")
    merge.add_argument("--dry-run", action="store_true", help="say what it would do, do nothing")
    discard = commands.add_parser(
        "discard",
        help="put a worktree session's branch and files back at its base (undoable)",
        description="What the worktree holds is kept under refs/cockpit first, so --undo"
        " brings it back; ignored files (.env) are never touched.",
    )
    discard.add_argument("session", help="a session id, or the start of one")
    choice = discard.add_mutually_exclusive_group()
    choice.add_argument("--yes", action="store_true", help="discard without asking")
    choice.add_argument("--undo", action="store_true", help="bring back the last discard")
    push = commands.add_parser("push", help="push a worktree session's branch (git push -u)")
    push.add_argument("session", help="a session id, or the start of one")
    push.add_argument(
        "to", nargs="?", default="origin", metavar="REMOTE", help="the git remote (default: origin)"
    )


def change_line(change: FileChange) -> str:
    """One changed file as `cockpit changes` lists it: its mark, path and line counts."""
    mark = MARKS.get(change.status, "?")
    if not change.readable:
        counts = "binary" if change.binary else "too large to show"
    else:
        added, removed = line_counts(change.old_text, change.new_text)
        counts = f"+{added} -{removed}"
    return printable(f"{mark} {change.path}  {counts}")


def patch_of(change: FileChange) -> str:
    """A changed file as a unified diff (or a line saying why there is none)."""
    if not change.readable:
        why = "binary" if change.binary else "too large to show"
        return f"{change.path}: {why}\n"
    before = "/dev/null" if change.status == "added" else f"a/{change.path}"
    after = "/dev/null" if change.status == "deleted" else f"b/{change.path}"
    lines = difflib.unified_diff(
        (change.old_text or "").splitlines(keepends=True),
        (change.new_text or "").splitlines(keepends=True),
        before,
        after,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def merge_words(result: MergeResult, dry_run: bool) -> str:
    """What a merge did, would do, or why not, as the command says it."""
    if result.conflicts:
        files = "\n".join(f"  {printable(name)}" for name in result.conflicts)
        return f"{result.refusal}\n{files}"
    if result.refusal:
        return result.refusal
    if dry_run:
        return f"It would merge into {result.target} as a {result.how}."
    return f"Merged into {result.target} as a {result.how}: {result.commit[:12]}."


async def worktree_work_command(args: argparse.Namespace, home: Path) -> int:
    engine = await reached(args, home)
    if engine is None:
        return EXIT_SERVICE
    try:
        try:
            session = (await engine.find_session(args.session)).id
        except KeyError as error:
            print(f"cockpit: {error.args[0]}", file=sys.stderr)
            return EXIT_USAGE
        try:
            return await _doing(engine, session, args)()
        except ValueError as error:
            print(f"cockpit: {printable(str(error))}", file=sys.stderr)
            return EXIT_FAILED
    finally:
        await engine.close()


def _doing(
    engine: EngineAPI, session: str, args: argparse.Namespace
) -> Callable[[], Awaitable[int]]:
    async def changes() -> int:
        found = await engine.worktree_changes(session)
        if args.json:
            print(json.dumps([asdict(change) for change in found], indent=2))
        elif args.patch:
            sys.stdout.write("".join(patch_of(change) for change in found))
        elif not found:
            print("No changes against the base.")
        else:
            for change in found:
                print(change_line(change))
        return EXIT_OK

    async def commit() -> int:
        print(printable(await engine.commit_worktree(session, args.message)))
        return EXIT_OK

    async def merge() -> int:
        result = await engine.merge_worktree(session, args.ff_only, args.dry_run)
        words = merge_words(result, args.dry_run)
        print(words, file=sys.stdout if result.refusal is None else sys.stderr)
        return EXIT_OK if result.refusal is None else EXIT_FAILED

    async def discard() -> int:
        if args.undo:
            print(printable(await engine.undo_discard(session)))
            return EXIT_OK
        if not args.yes:
            found = await engine.worktree_changes(session)
            for change in found:
                print(change_line(change))
            print(
                f"cockpit: nothing was discarded: {len(found)} changed file(s) would go back to"
                " the base (kept under refs/cockpit, so it can be undone). Run it again with"
                " --yes.",
                file=sys.stderr,
            )
            return EXIT_USAGE
        print(printable(await engine.discard_worktree(session)))
        return EXIT_OK

    async def push() -> int:
        print(printable(await engine.push_worktree(session, args.to)))
        return EXIT_OK

    return {
        "changes": changes, "commit": commit, "merge": merge, "discard": discard, "push": push,
    }[args.command]  # fmt: skip
