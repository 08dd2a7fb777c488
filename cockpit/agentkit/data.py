"""Where a bundled agent keeps its own files: the data folder Cockpit hands it."""

from __future__ import annotations

import os
from pathlib import Path


def configured_data_dir() -> Path | None:
    """`$COCKPIT_DATA_DIR`, which Cockpit sets for every agent it starts (its own data
    folder), or None when the agent was started some other way."""
    configured = os.environ.get("COCKPIT_DATA_DIR")
    if configured:
        return Path(configured).expanduser()
    return None
