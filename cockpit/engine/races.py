"""A race: one prompt sent to several agents (or one agent several times), each in a
worktree of its own from the same base, compared once their turns end: what each changed,
whether the repository's test command passes in its worktree, what it cost and how long
it took. The comparison's rules, pure; the engine runs the race."""

from __future__ import annotations

from collections.abc import Sequence

from cockpit.api import Contender, FileChange, MergeResult, SessionRecord, ShellRun, read_usage
from cockpit.records import RaceEntry, read_worktree_archive
from cockpit.text.diffstat import line_counts

TITLE_WORDS = 6
"""Words of the prompt in a contender's title."""


def contender_title(agent: str, number: int, prompt: str) -> str:
    """What a contender is called in the rail: its agent, its place, the prompt's start."""
    words = prompt.split()
    start = " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")
    return f"race {number} · {agent} · {start}"


def verdict(command: str | None, approved: bool, entry: RaceEntry, run: ShellRun | None) -> str:
    """Where the test of a contender stands (see `Contender.test`)."""
    if run is not None:
        if run.running:
            return "running"
        return "passed" if run.state == "exited" and run.exit_code == 0 else "failed"
    if command is None:
        return "none"
    if not approved:
        return "not approved"
    return "waiting" if entry.ended is None else "none"


def contender(
    record: SessionRecord,
    entry: RaceEntry,
    status: str,
    changes: Sequence[FileChange],
    test: str,
) -> Contender:
    """A contender as the comparison shows it."""
    added = removed = 0
    for change in changes:
        more, fewer = line_counts(change.old_text, change.new_text)
        added, removed = added + more, removed + fewer
    usage = read_usage(record.usage)
    tokens = usage.last_turn
    counted = [n for n in (tokens.input, tokens.output) if n is not None] if tokens else []
    gone = read_worktree_archive(record.info)
    return Contender(
        record.id,
        record.agent,
        status,
        len(changes),
        added,
        removed,
        test,
        None if entry.ended is None else max(0.0, entry.ended - entry.at),
        sum(counted) if counted else None,
        usage.cost.amount if usage.cost else None,
        usage.cost.currency if usage.cost else "USD",
        gone.state if gone is not None else "",
    )


def commit_message(prompt: str) -> str:
    """The message of the commit that keeps a contender's work: its prompt's first line."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return f"Race: {first[:60]}" if first else "Race"


def merged_words(result: MergeResult) -> str:
    """What keeping a contender merged."""
    return f"Merged into {result.target} as a {result.how}: {result.commit[:12]}."
