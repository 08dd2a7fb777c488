"""The checkpoints' pure rules: how a checkpoint is named and described in git, read back
from `git for-each-ref`, found by what the user types, bounded around a turn, and what a
restore would do. No I/O here: what exists on disk is asked through a function."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from cockpit.api import CHECKPOINT_PHASES, Checkpoint, RestorePlan

REF_ROOT = "refs/cockpit"
"""Where Cockpit keeps its refs, away from branches and tags."""

GITLINK = "160000"
"""The mode of a submodule's entry: a folder of another repository, never written or deleted."""

STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}
"""A letter of `git diff-tree` as the contract says it."""

_FIELDS = ("Cockpit-Turn", "Cockpit-Phase", "Cockpit-Time", "Cockpit-Changed")


def ref_prefix(session: str) -> str:
    """The folder of refs that holds a session's checkpoints."""
    return f"{REF_ROOT}/{session}/"


def ref_name(session: str, number: int) -> str:
    """The ref of a session's checkpoint number `number`."""
    return f"{ref_prefix(session)}{number}"


def checkpoint_message(turn: int, phase: str, time: float, changed: int) -> str:
    """The commit message of a checkpoint: a subject a person can read in `git log`, and
    the fields Cockpit reads back (the refs and their commits are the only record)."""
    subject = (
        "before a restore" if phase == "restore" else f"turn {turn} {phase}"
    )  # the phase words are the contract's
    return (
        f"Cockpit checkpoint: {subject}\n\n"
        f"Cockpit-Turn: {turn}\nCockpit-Phase: {phase}\n"
        f"Cockpit-Time: {time:.3f}\nCockpit-Changed: {changed}\n"
    )


def _fields(message: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in message.splitlines():
        name, colon, value = line.partition(":")
        if colon and name in _FIELDS:
            found[name] = value.strip()
    return found


def read_checkpoint(ref: str, commit: str, message: str, session: str) -> Checkpoint | None:
    """One checkpoint from its ref, commit and message; None for a ref that is not one of
    Cockpit's (made by hand, or a message it cannot read)."""
    number = ref.removeprefix(ref_prefix(session))
    if number == ref or not number.isdigit():
        return None
    fields = _fields(message)
    try:
        turn = int(fields["Cockpit-Turn"])
        time = float(fields["Cockpit-Time"])
        changed = int(fields["Cockpit-Changed"])
    except (KeyError, ValueError):
        return None
    phase = fields.get("Cockpit-Phase", "")
    if phase not in CHECKPOINT_PHASES:
        return None
    return Checkpoint(str(int(number)), turn, phase, commit, time, changed)


FOR_EACH_REF_FORMAT = "%(refname)%00%(objectname)%00%(contents)%00"
"""What `git for-each-ref` prints of each checkpoint, for `read_checkpoints`."""


def read_checkpoints(output: bytes, session: str) -> list[Checkpoint]:
    """A session's checkpoints from `git for-each-ref --format=FOR_EACH_REF_FORMAT`, in the
    order they were made."""
    parts = output.decode("utf-8", "replace").split("\0")
    found = []
    for index in range(0, len(parts) - 2, 3):
        ref, commit, message = parts[index].lstrip("\n"), parts[index + 1], parts[index + 2]
        checkpoint = read_checkpoint(ref, commit, message, session)
        if checkpoint is not None:
            found.append(checkpoint)
    return sorted(found, key=lambda checkpoint: int(checkpoint.id))


def find_checkpoint(checkpoints: Sequence[Checkpoint], name: str) -> Checkpoint:
    """The checkpoint `name` names: its number, or the start of its commit (at least 4
    characters). KeyError, saying why, when none or several."""
    name = name.strip()
    for checkpoint in checkpoints:
        if checkpoint.id == name.lstrip("#"):
            return checkpoint
    if len(name) >= 4:
        fits = [c for c in checkpoints if c.commit.startswith(name.lower())]
        if len(fits) == 1:
            return fits[0]
        if fits:
            raise KeyError(f"{name!r} fits several checkpoints: give more of the commit.")
    if not checkpoints:
        raise KeyError("This session has no checkpoint yet: one is made as each turn starts.")
    raise KeyError(
        f"No checkpoint {name!r} in this session: give its number (1-{checkpoints[-1].id}) "
        "or the start of its commit."
    )


@dataclass(frozen=True)
class TurnBounds:
    """The checkpoints around one turn: the one before its start (the previous turn's end,
    or a restore's), its start and its end (None when missing)."""

    before: Checkpoint | None
    start: Checkpoint | None
    end: Checkpoint | None


def turn_bounds(checkpoints: Sequence[Checkpoint], turn: int) -> TurnBounds:
    """Where a turn starts and ends among a session's checkpoints (the latest of each,
    should a turn have been checkpointed twice)."""
    start = end = before = None
    for index, checkpoint in enumerate(checkpoints):
        if checkpoint.turn == turn and checkpoint.phase == "start":
            start, end = checkpoint, None
            before = checkpoints[index - 1] if index else None
        elif checkpoint.turn == turn and checkpoint.phase == "end" and start is not None:
            end = checkpoint
    return TurnBounds(before, start, end)


@dataclass(frozen=True)
class DiffEntry:
    """One line of `git diff-tree -r -z --raw`: modes and blobs before and after."""

    status: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    path: str


def read_raw_diff(output: bytes) -> list[DiffEntry]:
    """The entries of `git diff-tree -r -z --no-renames` (no copies, no renames)."""
    parts = output.split(b"\0")
    entries = []
    index = 0
    while index + 1 < len(parts):
        meta = parts[index].decode("ascii", "replace").lstrip(":").split()
        path = os.fsdecode(parts[index + 1])
        index += 2
        if len(meta) < 5:
            continue
        old_mode, new_mode, old_blob, new_blob, status = meta[:5]
        entries.append(DiffEntry(status[:1], old_mode, new_mode, old_blob, new_blob, path))
    return entries


def restore_plan(
    checkpoint: str,
    diff: Iterable[DiffEntry],
    on_disk: Callable[[str], bool],
    refusal: str | None = None,
) -> RestorePlan:
    """What putting the files back as `checkpoint` holds them does, from the diff of the
    files as they are now (every tracked and untracked file not ignored) to the checkpoint.
    A file the checkpoint holds that is not among them but is on disk is ignored now: it is
    kept, never overwritten. A submodule's folder is never written or deleted."""
    overwrite: list[str] = []
    create: list[str] = []
    delete: list[str] = []
    kept: list[str] = []
    for entry in diff:
        if GITLINK in (entry.old_mode, entry.new_mode):
            continue
        if entry.status == "D":
            delete.append(entry.path)
        elif entry.status == "A":
            (kept if on_disk(entry.path) else create).append(entry.path)
        else:
            overwrite.append(entry.path)
    return RestorePlan(
        checkpoint,
        tuple(sorted(overwrite)),
        tuple(sorted(create)),
        tuple(sorted(delete)),
        tuple(sorted(kept)),
        refusal,
    )


def restore_refusal(turn_runs: bool, terminals_run: bool, commands_run: bool) -> str | None:
    """Why a restore cannot be done now, or None: it would change files under a turn or a
    command that is using them."""
    if turn_runs:
        return "A turn is running in this session: restore once it has ended, or cancel it."
    if terminals_run:
        return (
            "A command the agent started is still running in this session: restore once it "
            "has ended."
        )
    if commands_run:
        return (
            "Your command is still running in this session: restore once it has ended, or stop it."
        )
    return None


def restore_done(plan: RestorePlan, made: Checkpoint) -> str:
    """What a restore did, in the transcript's words, and how to undo it."""
    counts = [
        f"{len(files)} {what}"
        for files, what in (
            (plan.overwrite, "overwritten"),
            (plan.create, "written back"),
            (plan.delete, "deleted"),
            (plan.kept, "ignored and kept"),
        )
        if files
    ]
    done = ", ".join(counts) if counts else "nothing differed"
    return (
        f"Put the files back as checkpoint {plan.checkpoint} holds them ({done}). "
        f"Restore checkpoint {made.id} to undo this."
    )
