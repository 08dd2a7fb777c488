"""What a tool card says, as pure rules: its one line (status mark, kind, title, paths
short for the session's folder, a finished command's exit code), the class its status
gives the card, and whether the card opens by itself. Tested without an app."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from cockpit.text.textout import listed, tool_line

STATUS_CLASSES = {
    "completed": "-done",
    "failed": "-failed",
    "cancelled": "-cancelled",
    "in_progress": "-running",
    "pending": "-pending",
}
"""The class a card takes for its tool call's status (the stylesheet colours it)."""

TOOL_MARKS = {"completed": "✓", "failed": "✗", "cancelled": "⊘", "in_progress": "⋯", "pending": "○"}
"""The mark a card's line starts with, for its tool call's status."""


def has_terminal(payload: Mapping[str, Any] | None) -> bool:
    """True when a tool call embeds a terminal."""
    return any(
        isinstance(item, Mapping) and item.get("type") == "terminal"
        for item in listed((payload or {}).get("content"))
    )


def short_path(path: str, root: str | None, home: str | None = None) -> str:
    """A path as a card shows it: relative to the session's folder when inside it (`.` for
    the folder itself), `~/...` when under the home folder, else whole."""
    home = os.path.expanduser("~") if home is None else home
    for base, prefix in ((root, ""), (home, "~/")):
        base = (base or "").rstrip("/")
        if not base:
            continue
        if path == base:
            return "." if prefix == "" else "~"
        if path.startswith(base + "/"):
            return prefix + path[len(base) + 1 :]
    return path


def session_root(app: object, session: object) -> str | None:
    """The folder of `session` as the app knows it (None outside Cockpit's app)."""
    records = getattr(app, "records", None)
    record = records.get(session) if isinstance(records, Mapping) and session else None
    root = getattr(record, "cwd", None)
    return root if isinstance(root, str) else None


def exit_code(payload: Mapping[str, Any] | None) -> int | None:
    """How a finished command ended: the exit code of its (last) terminal, or the one in
    its raw output (agents without client terminals report it there)."""
    payload = payload or {}
    code = None
    terminals = payload.get("terminalOutput")
    for data in terminals.values() if isinstance(terminals, Mapping) else ():
        status = data.get("exitStatus") if isinstance(data, Mapping) else None
        if isinstance(status, Mapping) and isinstance(status.get("exitCode"), int):
            code = status["exitCode"]
    raw = payload.get("rawOutput")
    if code is None and isinstance(raw, Mapping):
        found = raw.get("exit_code", raw.get("exitCode"))
        code = found if isinstance(found, int) and not isinstance(found, bool) else None
    return code


def card_line(payload: Mapping[str, Any] | None, root: str | None) -> str:
    """A card's one line: `tool_line` with its paths (locations, and the title's) short
    for the session's folder at `root`, and a finished command's exit code."""
    payload = dict(payload or {})
    locations = payload.get("locations")
    if isinstance(locations, list):
        payload["locations"] = [
            {**loc, "path": short_path(loc["path"], root)}
            if isinstance(loc, Mapping) and isinstance(loc.get("path"), str)
            else loc
            for loc in locations
        ]
    title = payload.get("title")
    if isinstance(title, str) and root and root.rstrip("/"):
        payload["title"] = title.replace(root.rstrip("/") + "/", "")
    line = tool_line(payload)
    code = exit_code(payload)
    if code is not None and payload.get("status") in ("completed", "failed"):
        line += f" · exit {code}"
    return line


def card_opens(policy: str, status: str, terminal: bool) -> bool:
    """Whether a tool card is open by itself under `policy` ("failures", "always" or
    "never") in `status`."""
    if policy == "always":
        return True
    if policy == "never":
        return False
    return status == "failed" or (status == "in_progress" and terminal)
