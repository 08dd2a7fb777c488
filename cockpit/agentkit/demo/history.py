"""The demo sessions and their saved histories: one owner-only JSON file per session, in
the data folder Cockpit hands the agent, so `session/load` can replay it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from acp.core import RequestError

from cockpit.agentkit.data import configured_data_dir
from cockpit.agentkit.demo.options import DEFAULT_MODEL
from cockpit.agentkit.errors import resource_missing
from cockpit.agentkit.settings import DEFAULT_MODE
from cockpit.atomic_file import write_atomically
from cockpit.paths import private_dir


class Session:
    """What the agent remembers about one session."""

    def __init__(
        self,
        session_id: str,
        cwd: str,
        mode: str = DEFAULT_MODE,
        model: str = DEFAULT_MODEL,
        history: list[dict[str, str]] | None = None,
        mcp_servers: list[Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.mode = mode
        self.model = model
        self.history: list[dict[str, str]] = history or []
        self.mcp_servers: list[Any] = mcp_servers or []
        """The MCP servers the client handed the session (the plan tool among them)."""
        self.cancel = asyncio.Event()
        self.commands_due = True
        """True until the slash commands were announced for this session."""


def data_root() -> Path:
    """Where histories live, made owner-only: `$COCKPIT_DATA_DIR/demo-agent`, else a folder
    of this user's under the temporary folder. Another user may have made that one first
    (its name is easy to guess): a link or a folder of theirs there is refused, never
    followed or written in."""
    configured = configured_data_dir()
    if configured:
        return private_dir(configured / "demo-agent")
    owner = str(os.getuid()) if hasattr(os, "getuid") else "user"
    shared = private_dir(Path(tempfile.gettempdir()) / f"cockpit-demo-{owner}", follow=False)
    return private_dir(shared / "demo-agent", follow=False)


def history_path(session_id: str) -> Path | None:
    """The history file of `session_id`, or None for an id that is not a plain name."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", session_id):
        return None
    return data_root() / f"{session_id}.json"


def save_session(session: Session) -> None:
    """Write the session's history file (0600) atomically, so a crash never truncates it."""
    path = history_path(session.session_id)
    if path is None:
        return
    record = {
        "sessionId": session.session_id,
        "cwd": session.cwd,
        "mode": session.mode,
        "model": session.model,
        "history": session.history,
    }
    write_atomically(path, json.dumps(record).encode("utf-8"), 0o600)


def read_saved(session_id: str) -> dict[str, Any] | None:
    """The saved record of `session_id`, or None when there is none."""
    path = history_path(session_id)
    if path is None or not path.is_file():
        return None
    with path.open(encoding="utf-8") as handle:
        record = json.load(handle)
    return record if isinstance(record, dict) else None


def not_found(session_id: str) -> RequestError:
    """The clear error for a session this agent has no history of."""
    path = history_path(session_id)
    return resource_missing(
        path.as_uri() if path else session_id,
        sessionId=session_id,
        reason="the demo agent has no saved history for this session",
    )
