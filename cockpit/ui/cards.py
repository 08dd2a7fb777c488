"""What a tool card says, as pure rules: its one line (status mark, kind, title, paths
short for the session's folder, a finished command's exit code), the class its status
gives the card, and whether the card opens by itself. Tested without an app."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace

from cockpit.api import ToolCall, Unknown
from cockpit.text.textout import call_line

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


def has_terminal(call: ToolCall | Unknown) -> bool:
    """True when a tool call embeds a terminal."""
    return isinstance(call, ToolCall) and call.has_terminal


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


def exit_code(call: ToolCall | Unknown) -> int | None:
    """How a finished command ended: the exit code of its (last) terminal, or the one in
    its raw output (agents without client terminals report it there)."""
    if isinstance(call, Unknown):
        return None
    code = None
    for terminal in (call.terminals or {}).values():
        if terminal.exit_status is not None and terminal.exit_status.code is not None:
            code = terminal.exit_status.code
    if code is None and call.raw_output is not None:
        code = call.raw_output.exit_code
    return code


def card_line(call: ToolCall | Unknown, root: str | None) -> str:
    """A card's one line: `call_line` with its paths (locations, and the title's) short
    for the session's folder at `root`, and a finished command's exit code."""
    if isinstance(call, Unknown):
        return call_line(call)
    title = call.title
    if title and root and root.rstrip("/"):
        title = title.replace(root.rstrip("/") + "/", "")
    shown = replace(
        call,
        title=title,
        locations=tuple(replace(loc, path=short_path(loc.path, root)) for loc in call.locations),
    )
    line = call_line(shown)
    code = exit_code(call)
    if code is not None and call.status in ("completed", "failed"):
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
