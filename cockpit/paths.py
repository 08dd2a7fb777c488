"""Where Cockpit keeps its files: the platform's user data folder, or COCKPIT_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "cockpit"
DATABASE_NAME = "cockpit.db"


def data_dir(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """The folder holding the store: `$COCKPIT_HOME` when set, else the user data folder."""
    env = os.environ if environ is None else environ
    home = env.get("COCKPIT_HOME")
    if home:
        return Path(home).expanduser()
    return platformdirs.user_data_path(APP_NAME, appauthor=False)


def database_path(environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """The store's SQLite file."""
    return data_dir(environ) / DATABASE_NAME
