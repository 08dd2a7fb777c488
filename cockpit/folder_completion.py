"""Completing a folder's path as a shell does, on both sides of the contract: the engine
lists the folders a typed path may go on to (`matching`), where the agents run; the
new-session dialog completes what was typed with them (`completed`, `suggested`). One rule
cuts a typed path for both (`split_partial`), so the names the engine sends back go on
the end of what the user typed, whatever form it has (`~/src/co`, `../x`)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence

FOLDERS_LIMIT = 50
"""The most names one listing sends: enough to show, small enough for every keystroke."""


def split_partial(partial: str) -> tuple[str, str]:
    """`partial` cut after its last `/`: the folder to list, as typed (empty when there is
    no `/`), and the start of the name being typed."""
    head, slash, stem = partial.rpartition("/")
    return head + slash, stem


def absolute(typed: str, base: str) -> str:
    """The path to ask about for `typed`: itself when it starts at `/` or at a home (`~`,
    which the engine expands where it runs), else under `base`, the folder the dialog
    opened with (the engine's own working folder means nothing to the user)."""
    if typed.startswith(("/", "~")):
        return typed
    return posixpath.join(base, typed)


def matching(names: Iterable[str], stem: str, limit: int = FOLDERS_LIMIT) -> list[str]:
    """The names that start with `stem`, sorted; hidden ones (`.git`) only when `stem`
    starts with a dot, as in a shell. At most `limit` (at least 2): more are cut in the
    middle and the last is kept, so that what the first and the last share is still what
    every match shares, and a completion never goes past a folder that was cut."""
    hidden = stem.startswith(".")
    found = sorted(
        name for name in names if name.startswith(stem) and (hidden or not name.startswith("."))
    )
    if len(found) > limit:
        found = [*found[: max(limit, 2) - 1], found[-1]]
    return found


def reachable(head: str, name: str) -> bool:
    """False for a folder here whose name starts with `~`: written bare, it reads as a
    home folder (`./~x` reaches it)."""
    return bool(head) or not name.startswith("~")


def completed(typed: str, names: Sequence[str]) -> str:
    """`typed` completed as far as the folders `names` agree: one folder whole, with a
    `/` after it; several, up to the longest start they share. `~` alone is the home
    folder. What does not go on from `typed` is not taken."""
    if typed == "~":
        return "~/"
    head, stem = split_partial(typed)
    fitting = [name for name in names if name.startswith(stem) and reachable(head, name)]
    if not fitting:
        return typed
    if len(fitting) == 1:
        return head + fitting[0] + "/"
    return head + os.path.commonprefix(fitting)  # noqa: RUF071 (names: their shared start)


def suggested(typed: str, names: Sequence[str]) -> str | None:
    """The path shown greyed after `typed`, taken with Right or End: the first folder it
    may go on to, whole (None when there is none, or `typed` names it already)."""
    head, stem = split_partial(typed)
    fitting = (name for name in names if name.startswith(stem) and reachable(head, name))
    first = next(fitting, None)
    if first is None:
        return None
    suggestion = head + first + "/"
    return suggestion if suggestion != typed else None
