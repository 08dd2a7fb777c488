"""Cockpit's log file: Python logging goes there, never to the terminal."""

from __future__ import annotations

import io
import logging
import os
from pathlib import Path

from cockpit.paths import private_dir

LOG_NAME = "cockpit.log"


class _LogFile(logging.FileHandler):
    """Cockpit's log file: created owner-only when the first record comes, and silent when
    it cannot be written (the terminal is never the fallback)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def _open(self) -> io.TextIOWrapper:
        path = Path(self.baseFilename)
        private_dir(path.parent)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return open(descriptor, "a", encoding="utf-8")  # the handler closes it

    def handleError(self, record: logging.LogRecord) -> None:
        """A record that cannot be written is dropped, never shown on the terminal."""


def log_to_file(home: Path) -> None:
    """Send Python logging to `logs/cockpit.log` in the data folder, never to the terminal:
    the ACP SDK logs a traceback for each message of an agent's it cannot handle, which
    must not land in the user's terminal, or across the TUI. Installed once."""
    root = logging.getLogger()
    if not any(isinstance(handler, _LogFile) for handler in root.handlers):
        root.addHandler(_LogFile(home / "logs" / LOG_NAME))
