"""Rows as plain text and Markdown: pure renderings used by `cockpit show`, `cockpit run`
and exports. No terminal handling here; callers sanitise for terminals."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from cockpit.plan_protocol import PLAN_MARKS
from cockpit.records import (
    DiffContent,
    Plan,
    ShellRun,
    TextContent,
    ToolCall,
    Unknown,
    read_plan,
    read_shell_run,
    read_tool_call,
)
from store import Row, SessionRecord

TOOL_MARKS = {
    "completed": "done",
    "failed": "FAILED",
    "cancelled": "cancelled",
    "in_progress": "running",
}
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
    call = read_tool_call(tool_call)
    return call.command if isinstance(call, ToolCall) else None


def describe_error(error: BaseException) -> str:
    """An error as the user reads it: its message, or its type when it has none (an
    assertion, a bare exception)."""
    return str(error) or type(error).__name__


def tool_line(payload: Mapping[str, Any] | None) -> str:
    """One line for a tool row's payload: kind, title, status and where it acts."""
    return call_line(read_tool_call(payload))


def call_line(call: ToolCall | Unknown) -> str:
    """One line for a tool call: kind, title, status and where it acts."""
    if isinstance(call, Unknown):
        return f"[unknown] {call.sentence}"
    title = call.title or call.id or "a tool call"
    locations = [f"{loc.path}{':' + str(loc.line) if loc.line else ''}" for loc in call.locations]
    where = f" ({', '.join(locations)})" if locations and locations[0] not in title else ""
    return f"[{call.kind or 'tool'}] {title}{where} - {TOOL_MARKS.get(call.status, call.status)}"


def tool_output(payload: Mapping[str, Any] | None) -> str:
    """What a tool row's payload says its call produced (see `call_output`)."""
    return call_output(read_tool_call(payload))


def call_output(call: ToolCall | Unknown) -> str:
    """What a tool call produced: its text content, diffs in short, terminal output or raw
    output (Codex reports only `rawOutput`)."""
    if isinstance(call, Unknown):
        return ""
    parts: list[str] = []
    for item in call.content:
        if isinstance(item, TextContent):
            parts.append(item.text)
        elif isinstance(item, DiffContent):
            old, new = item.old_text, item.new_text
            change = (
                "new file"
                if old is None
                else f"{len(old.splitlines())} -> {len(new.splitlines())} lines"
            )
            parts.append(f"diff {item.path}: {change}")
    parts.extend(terminal.output for terminal in (call.terminals or {}).values())
    if not parts and call.raw_output is not None:
        parts.extend(call.raw_output.texts)
    return "\n".join(part.rstrip("\n") for part in parts if part)


def plan_lines(payload: Mapping[str, Any] | None) -> list[str]:
    """A plan row's payload as a checklist."""
    return plan_checklist(read_plan(payload))


PLAN_AUTHORS = {"tool": "the plan tool", "agent": "the agent", "user": "you"}
"""Who wrote a plan, in the words its row shows."""


def plan_source(plan: Plan) -> str:
    """Which revision of the session's plan this is, and who wrote it."""
    return f"revision {plan.revision}, by {PLAN_AUTHORS.get(plan.author, plan.author)}"


def plan_checklist(plan: Plan | Unknown) -> list[str]:
    """A plan as a checklist (an unreadable one says so)."""
    if isinstance(plan, Unknown):
        return [plan.sentence]
    return [f"{PLAN_MARKS.get(entry.status, '[ ]')} {entry.content}" for entry in plan.entries]


def shell_line(payload: Mapping[str, Any] | None) -> str:
    """A command the user ran, on one line: `$ command` and how it ended."""
    run = read_shell_run(payload)
    if isinstance(run, Unknown):
        return run.sentence
    return f"$ {run.command}  [{shell_ending(run)}]"


def shell_ending(run: ShellRun) -> str:
    """Where a command the user ran stands, in a few words."""
    if run.state == "exited":
        return f"exit {run.exit_code}"
    if run.state == "killed":
        return f"killed by {run.signal}" if run.signal else "killed"
    return {"running": "running…", "failed": "could not start", "cut": "cut: Cockpit stopped"}.get(
        run.state, run.state
    )


def shell_markdown(row: Row) -> str:
    """A command the user ran and its output, as Markdown: fenced, the command first."""
    run = read_shell_run(row.payload)
    if isinstance(run, Unknown):
        return f"*{run.sentence}*\n"
    body = f"$ {run.command}\n{row.text}"
    fence = fence_for(body)
    body = body if body.endswith("\n") else body + "\n"
    return f"**You ran a command** ({shell_ending(run)})\n\n{fence}\n{body}{fence}\n"


def fence_for(text: str) -> str:
    """A code fence that no line of `text` can close: longer than its longest run of
    backticks, and at least three."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


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
    if row.kind == "shell":
        return shell_line(row.payload) + "".join(f"\n    {line}" for line in row.text.splitlines())
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
        elif row.kind == "shell":
            out.append(shell_markdown(row))
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


def size_words(size: int) -> str:
    """A disk size as a person reads it (`12.3 MB`)."""
    amount = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if amount < 1000 or unit == "GB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1000
    return f"{amount:.1f} TB"  # pragma: no cover - the loop returns
