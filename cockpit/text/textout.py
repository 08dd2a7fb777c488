"""Rows as plain text and Markdown: pure renderings used by `cockpit show`, `cockpit run`
and exports. No terminal handling here; callers sanitise for terminals."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from store import Row, SessionRecord

TOOL_MARKS = {
    "completed": "done",
    "failed": "FAILED",
    "cancelled": "cancelled",
    "in_progress": "running",
}
PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
RUN_MARK = "run"
"""The word `cockpit ls` and the rail show beside a session `cockpit run` made."""


def listed(value: Any) -> list[Any]:
    """The items of a field that should hold a list (a tool call's content or locations, a
    plan's entries): none when it holds anything else, as an agent may send (a 7 there
    ended the app when its card opened)."""
    return value if isinstance(value, list) else []


def command_of(tool_call: Mapping[str, Any]) -> str | None:
    """The command line a tool call would run, when the agent says (`rawInput.command`,
    with `rawInput.args` when it splits them out)."""
    raw = tool_call.get("rawInput")
    if not isinstance(raw, Mapping):
        return None
    command, args = raw.get("command"), raw.get("args")
    if isinstance(command, list):
        return shlex.join(str(part) for part in command)
    if not isinstance(command, str) or not command:
        return None
    if isinstance(args, list) and args:
        return shlex.join([command, *(str(arg) for arg in args)])
    return command


def describe_error(error: BaseException) -> str:
    """An error as the user reads it: its message, or its type when it has none (an
    assertion, a bare exception)."""
    return str(error) or type(error).__name__


def tool_line(payload: Mapping[str, Any] | None) -> str:
    """One line for a tool call: kind, title, status and where it acts."""
    payload = payload or {}
    kind = payload.get("kind") or "tool"
    title = payload.get("title") or payload.get("toolCallId") or "a tool call"
    status = str(payload.get("status") or "pending")
    locations = [
        f"{loc.get('path')}{':' + str(loc['line']) if loc.get('line') else ''}"
        for loc in listed(payload.get("locations"))
        if isinstance(loc, Mapping) and loc.get("path")
    ]
    where = (
        f" ({', '.join(locations)})" if locations and str(locations[0]) not in str(title) else ""
    )
    return f"[{kind}] {title}{where} - {TOOL_MARKS.get(status, status)}"


def tool_output(payload: Mapping[str, Any] | None) -> str:
    """What a tool call produced: its text content, diffs in short, terminal output or raw
    output (Codex reports only `rawOutput`)."""
    payload = payload or {}
    parts: list[str] = []
    for item in listed(payload.get("content")):
        if not isinstance(item, Mapping):
            continue
        if item.get("type") == "content":
            block = item.get("content") or {}
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        elif item.get("type") == "diff":
            old = item.get("oldText")
            new = str(item.get("newText") or "")
            change = (
                "new file"
                if old is None
                else f"{len(str(old).splitlines())} -> {len(new.splitlines())} lines"
            )
            parts.append(f"diff {item.get('path')}: {change}")
    for terminal in (payload.get("terminalOutput") or {}).values():
        if isinstance(terminal, Mapping):
            parts.append(str(terminal.get("output") or ""))
    raw = payload.get("rawOutput")
    if not parts and isinstance(raw, Mapping):
        for name in ("stdout", "stderr", "output", "formatted_output"):
            if isinstance(raw.get(name), str) and raw[name]:
                parts.append(raw[name])
    elif not parts and isinstance(raw, str):
        parts.append(raw)
    return "\n".join(part.rstrip("\n") for part in parts if part)


def plan_lines(payload: Mapping[str, Any] | None) -> list[str]:
    """A plan as a checklist."""
    entries = listed((payload or {}).get("entries"))
    return [
        f"{PLAN_MARKS.get(str(entry.get('status')), '[ ]')} {entry.get('content', '')}"
        for entry in entries
        if isinstance(entry, Mapping)
    ]


def row_text(row: Row) -> str:
    """A row as plain text, the way `cockpit show` prints it."""
    if row.kind == "user":
        return "\n".join(f"> {line}" for line in row.text.splitlines() or [""])
    if row.kind == "thought":
        return "\n".join(f"  (thinking) {line}" for line in row.text.splitlines())
    if row.kind == "tool":
        output = tool_output(row.payload)
        indented = "".join(f"\n    {line}" for line in output.splitlines()[:20])
        return tool_line(row.payload) + indented
    if row.kind == "plan":
        return "Plan:\n" + "\n".join(f"  {line}" for line in plan_lines(row.payload))
    if row.kind in ("notice", "error", "permission"):
        mark = {"notice": "!", "error": "ERROR:", "permission": "*"}[row.kind]
        return f"{mark} {row.text}"
    return row.text


def transcript_text(rows: Iterable[Row]) -> str:
    """A whole transcript as plain text, one blank line between rows."""
    return "\n\n".join(row_text(row) for row in rows) + "\n"


def transcript_markdown(rows: Iterable[Row], title: str) -> str:
    """A whole transcript as a Markdown document."""
    out = [f"# {title}\n"]
    for row in rows:
        if row.kind == "user":
            out.append(f"## You\n\n{row.text}\n")
        elif row.kind == "agent":
            out.append(f"## Agent\n\n{row.text}\n")
        elif row.kind == "thought":
            quoted = "\n".join(f"> {line}" for line in row.text.splitlines())
            out.append(f"<details><summary>Thinking</summary>\n\n{quoted}\n\n</details>\n")
        elif row.kind == "tool":
            output = tool_output(row.payload)
            fenced = f"\n\n```\n{output}\n```" if output else ""
            out.append(f"**Tool** `{tool_line(row.payload)}`{fenced}\n")
        elif row.kind == "plan":
            out.append(
                "**Plan**\n\n" + "\n".join(f"- {line}" for line in plan_lines(row.payload)) + "\n"
            )
        else:
            out.append(f"*{row.kind}: {row.text}*\n")
    return "\n".join(out)


def session_title(record: SessionRecord) -> str:
    """The title a session shows: its name, or a placeholder before the first prompt."""
    return record.title or "New session"


def age(seconds: float) -> str:
    """A compact age: now, 42s, 5m, 3h, 2d."""
    if seconds < 5:
        return "now"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"
