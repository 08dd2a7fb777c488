"""What a tool call's input means: paths confined to the project folder, the whole numbers
and texts the tools take, and the title and locations the client shows for a call."""

from __future__ import annotations

import os
import posixpath
from typing import Any

from cockpit.inside_root import inside, under


class ToolFailure(Exception):
    """A tool could not do its job; the message goes back to the model as an error."""


def resolve(cwd: str, path: str | None) -> str:
    """An absolute path inside `cwd` for a path the model gave (ToolFailure outside it, `~`
    the home folder): inside as written, and inside with symbolic links followed (a link
    out of the folder is outside it too)."""
    raw = os.path.expanduser((path or ".").strip() or ".")
    joined = posixpath.normpath(raw if posixpath.isabs(raw) else posixpath.join(cwd, raw))
    if not under(joined, posixpath.normpath(cwd)) or not inside(joined, cwd):
        raise ToolFailure(f"{path} is outside the project folder {cwd}; it cannot be reached.")
    return joined


def relative(cwd: str, path: str) -> str:
    """`path` as the user would write it: relative to the project folder."""
    return posixpath.relpath(path, cwd) if under(path, cwd) else path


def argument_path(cwd: str, path: str) -> str:
    """A resolved path as a program argument (find, grep): relative to the project folder
    and led by `./` (or absolute), so a name like `-fprint` can never read as an option or
    an expression."""
    shown = relative(cwd, path)
    if shown == "." or shown.startswith("/"):
        return shown
    return f"./{shown}"


def describe_call(cwd: str, name: str, arguments: dict[str, Any]) -> tuple[str, list[str]]:
    """A tool call's title and the paths it touches, for the client."""
    path = arguments.get("path")
    where = ""
    locations: list[str] = []
    if isinstance(path, str) or name in ("list_files", "search"):
        try:
            absolute = resolve(cwd, path if isinstance(path, str) else None)
            where = relative(cwd, absolute)
            locations = [absolute]
        except ToolFailure:
            where = str(path)
    if name == "read_file":
        return f"Read {where}", locations
    if name == "write_file":
        return f"Write {where}", locations
    if name == "edit_file":
        return f"Edit {where}", locations
    if name == "run_command":
        command = str(arguments.get("command", ""))
        line = command.splitlines()[0] if command else ""
        return f"Run `{line[:80]}`" + ("…" if len(line) > 80 or "\n" in command else ""), []
    if name == "list_files":
        return f"List {where}", locations
    if name == "search":
        return f"Search {str(arguments.get('pattern', ''))[:60]!r} in {where}", locations
    return f"{name} (unknown tool)", locations


def int_arg(arguments: dict[str, Any], name: str) -> int | None:
    """A whole-number argument (at least 1), None when absent; ToolFailure otherwise."""
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ToolFailure(f"{name} must be a whole number.")
    try:
        return max(1, int(value))
    except ValueError as error:
        raise ToolFailure(f"{name} must be a whole number.") from error


def str_arg(arguments: dict[str, Any], name: str, empty: bool = False) -> str:
    """A text argument (non-empty unless `empty`); ToolFailure otherwise."""
    value = arguments.get(name)
    if not isinstance(value, str) or (not empty and not value):
        raise ToolFailure(f"{name} is required and must be a non-empty string.")
    return value
