"""Whether a path lies inside a root: the one rule behind the policy's "inside the session's
folder", fs/* confinement, the mention index's links and the bundled agents' tools.

A path is inside when it is the root or lies below it, compared part by part once both are
resolved: `..`, a link out of the root, and a sibling that only shares the root's name as a
prefix (`/x/proj-evil` beside `/x/proj`) are all outside. `~` means the home folder, as an
agent that names it means it, never a folder called `~` in the root.
"""

from __future__ import annotations

import os
from pathlib import Path


def under(path: str, root: str) -> bool:
    """True when `path` is `root` or below it, whole part by whole part. Both are taken as
    they are (absolute and normalised by the caller): nothing is resolved here."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def real_path(path: str, root: str | Path) -> str:
    """The real path `path` names: `~` expanded, a relative path taken from the root, links
    and `..` resolved."""
    path = os.path.expanduser(path)
    return os.path.realpath(path if os.path.isabs(path) else os.path.join(root, path))


def inside(path: str, root: str | Path) -> bool:
    """True when `path` (see `real_path`) is `root` or lies under it, links followed."""
    return under(real_path(path, root), os.path.realpath(root))
