"""Which files are under a root: `git ls-files` inside a work tree (so every .gitignore,
`.git/info/exclude` and the global excludes apply), else a walk of the tree that honours
the `.gitignore` files it meets. Either way a listing is capped at MAX_FILES paths and says
when it was cut."""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from cockpit.engine.file_index.gitignore import IgnoreRules, is_ignored
from cockpit.inside_root import under
from cockpit.spawning import spawn

MAX_FILES = 200_000
"""Most paths an index holds; a bigger tree is cut (sorted order for git) and flagged."""

HEAVY_DIRS = frozenset(
    {"node_modules", ".venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
"""Folders skipped by the walk outside git: huge, generated, never what a user mentions."""

GIT_TIMEOUT = 30.0
"""Seconds `git ls-files` may take before the index falls back to walking the tree."""


def walk(root: Path, cap: int) -> tuple[list[str], bool]:
    """Files under `root` (not following symlinked folders), honouring `.gitignore` files and
    skipping `.git` and the heavy folders; (paths, truncated)."""
    real_root = os.path.realpath(root)
    found: list[str] = []
    stack: list[tuple[str, str, list[IgnoreRules]]] = [(str(root), "", [])]
    while stack:
        folder, prefix, rules = stack.pop()
        ignore_file = os.path.join(folder, ".gitignore")
        if os.path.isfile(ignore_file):
            rules = [*rules, IgnoreRules.read(Path(ignore_file), prefix.rstrip("/"))]
        try:
            with os.scandir(folder) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            name = entry.name
            if name == ".git":
                continue
            relative = prefix + name
            try:
                if entry.is_symlink():
                    # A link counts as a file when it resolves to a file inside the root;
                    # linked folders are never entered (no loops, no escaping the root).
                    real = os.path.realpath(entry.path)
                    if not (under(real, real_root) and os.path.isfile(real)):
                        continue
                    if is_ignored(rules, relative, False):
                        continue
                    found.append(relative)
                elif entry.is_dir(follow_symlinks=False):
                    if name in HEAVY_DIRS or is_ignored(rules, relative, True):
                        continue
                    stack.append((entry.path, relative + "/", rules))
                elif entry.is_file(follow_symlinks=False):
                    if is_ignored(rules, relative, False):
                        continue
                    found.append(relative)
            except OSError:
                continue
            if len(found) > cap:
                return found[:cap], True
    return found, False


@dataclass(frozen=True, slots=True)
class GitListing:
    """What git says is under the root: tracked entries with their modes, untracked files
    that no ignore rule hides, and tracked files deleted from the work tree."""

    tracked: list[tuple[bytes, str]]
    untracked: list[str]
    deleted: set[str]


async def git_listing(root: Path) -> GitListing | None:
    """Git's view of `root`, or None when it is not in a work tree, git is missing, fails
    or takes too long. Three `git ls-files` run at once: the tracked entries' modes tell
    regular files from symlinks and submodules, and `--deleted` drops missing files, so
    only untracked paths and tracked symlinks need a look at the disk."""
    try:
        async with asyncio.timeout(GIT_TIMEOUT):
            staged, others, deleted = await asyncio.gather(
                _git(root, "--cached", "--stage"),
                _git(root, "--others", "--exclude-standard"),
                _git(root, "--deleted"),
            )
    except TimeoutError:
        return None
    if staged is None or others is None or deleted is None:
        return None
    tracked: list[tuple[bytes, str]] = []
    for record in staged.split(b"\0"):
        meta, tab, path = record.partition(b"\t")
        if tab:
            tracked.append((meta.partition(b" ")[0], os.fsdecode(path)))
    return GitListing(
        tracked,
        [os.fsdecode(raw) for raw in others.split(b"\0") if raw and not raw.endswith(b"/")],
        {os.fsdecode(raw) for raw in deleted.split(b"\0") if raw},
    )


async def _git(root: Path, *options: str) -> bytes | None:
    """The output of `git ls-files -z OPTIONS` in `root`, or None if it cannot run or fails."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        process = await spawn(
            "git",
            "ls-files",
            "-z",
            *options,
            cwd=root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    try:
        output, _ = await process.communicate()
    except BaseException:  # cancelled (timeout): leave no git behind
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    return output if process.returncode == 0 else None


def git_files(root: Path, listing: GitListing, cap: int) -> tuple[list[str], bool]:
    """The files of a git listing that are files now: tracked regular files not deleted,
    tracked symlinks and untracked paths only when they are (or resolve to) a file inside
    the root, never submodules; (sorted paths, truncated)."""
    real_root = os.path.realpath(root)
    base = str(root)

    def inside_file(relative: str) -> bool:
        real = os.path.realpath(os.path.join(base, relative))
        return under(real, real_root) and os.path.isfile(real)

    found: set[str] = set()
    for mode, relative in listing.tracked:
        if relative in listing.deleted:
            continue
        if mode in (b"100644", b"100755") or (mode == b"120000" and inside_file(relative)):
            found.add(relative)
    for relative in listing.untracked:
        try:
            mode_bits = os.lstat(os.path.join(base, relative)).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode_bits) or (stat.S_ISLNK(mode_bits) and inside_file(relative)):
            found.add(relative)
    paths = sorted(found)
    return paths[:cap], len(paths) > cap
