"""Pure rules of a worktree session: its branch's name (`cockpit/<title>-<id>`, always a
name git takes) and where its worktree goes (under Cockpit's worktrees folder, never in
the user's checkout, where their repository would see it)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

DEFAULT_PREFIX = "cockpit/"
"""What a worktree session's branch name starts with, unless configured."""

SLUG_LENGTH = 40
"""The longest part of a branch name taken from a title: a name stays short enough to read
in the rail and in `git branch`."""

FALLBACK = "session"
"""The name part of a session whose title gives none (no title, or no letter in it)."""

_NOT_SAFE = re.compile(r"[^a-z0-9]+")


def slug(title: str | None) -> str:
    """A title as the part of a branch or folder name: lower case letters and digits
    (accents dropped) joined by single dashes, at most `SLUG_LENGTH` characters."""
    plain = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode()
    words = _NOT_SAFE.sub("-", plain.lower()).strip("-")
    return words[:SLUG_LENGTH].rstrip("-") or FALLBACK


def branch_name(title: str | None, session_id: str, prefix: str = DEFAULT_PREFIX) -> str:
    """The branch of a new worktree session: `prefix`, the title's slug and the session's
    id (`cockpit/fix-the-tests-1a2b3c4d`). The id keeps two sessions of one title apart."""
    return f"{prefix}{slug(title)}-{slug(session_id)}"


def ref_problem(name: str) -> str | None:
    """Why git would refuse `name` as a branch name, or None when it takes it (the rules of
    `git check-ref-format --branch`, for a name Cockpit makes or a prefix configured)."""
    if not name or name.startswith("-"):
        return "a branch name cannot be empty or start with a dash"
    if name == "@" or "@{" in name:
        return "a branch name cannot be @ or hold @{"
    if ".." in name or "//" in name or name.startswith("/") or name.endswith(("/", ".")):
        return "a branch name cannot hold .. or //, or begin or end with / (or end with .)"
    if any(ord(c) < 32 or ord(c) == 127 or c in " ~^:?*[\\" for c in name):
        return "a branch name cannot hold spaces, control characters or any of ~^:?*[\\"
    for part in name.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return "no part of a branch name may begin with . or end with .lock"
    return None


def prefix_problem(prefix: str) -> str | None:
    """Why `prefix` cannot begin Cockpit's branch names, or None when it can."""
    if not prefix:
        return None
    problem = ref_problem(f"{prefix}x")
    return f"the branch prefix {prefix!r} cannot be used: {problem}" if problem else None


def worktree_path(folder: Path, repository: Path, title: str | None, session_id: str) -> Path:
    """Where a session's worktree goes: in `folder`, a folder per repository (its name),
    and in it one per session (its title's slug and id), so two repositories of one name
    and two sessions of one title never meet."""
    return folder / slug(repository.name) / f"{slug(title)}-{slug(session_id)}"
