"""Cockpit's log file: Python logging goes there, never to the terminal."""

from __future__ import annotations

import logging
from pathlib import Path

from cockpit.logfiles import RotatingLog

LOG_NAME = "cockpit.log"


def log_to_file(home: Path) -> None:
    """Send Python logging to `logs/cockpit.log` in the data folder, never to the terminal:
    the ACP SDK logs a traceback for each message of an agent's it cannot handle, which
    must not land in the user's terminal, or across the TUI. Rotated by size (every
    command, screen and service of the store writes it). Installed once."""
    root = logging.getLogger()
    if not any(isinstance(handler, RotatingLog) for handler in root.handlers):
        root.addHandler(RotatingLog(home / "logs" / LOG_NAME))
