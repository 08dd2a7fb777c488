"""The tree under test, and the environment that makes a process a test starts import it.

`python -m cockpit` and a bundled agent run by its path import `cockpit` from wherever the
interpreter finds it first: an editable install of another checkout, say. With this tree
first on PYTHONPATH they import the code under test, whichever checkout installed the
interpreter's `cockpit`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TREE = Path(__file__).resolve().parents[2]
"""The checkout whose tests run: the folder holding `cockpit`, `store` and `tests`."""


def tree_first(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with this tree first on PYTHONPATH (its other entries kept after it)."""
    rest = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    rest = [entry for entry in rest if Path(entry).resolve() != TREE]
    return {**env, "PYTHONPATH": os.pathsep.join([str(TREE), *rest])}
