"""The plan's protocol: what the plan tool (`cockpit.plan_server`, run by the agent as an MCP
server) and the engine that keeps the plan say to each other, and the plan's rules.

The engine serves plan calls on a private socket of its own; the agent starts the plan
server with the socket's path, the session's id and a token minted for that one session
in its environment. Each call is one connection: one JSON line asked, one answered. The
token lets a cooperative agent write its own session's plan and nothing else; it is not a
wall against an agent, which runs as the user. Pure: the standard library and the contract's
plan records only, so the plan server starts with `mcp` and this module alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from cockpit.records import PlanEntry

SOCKET_VARIABLE = "COCKPIT_PLAN_SOCKET"
SESSION_VARIABLE = "COCKPIT_PLAN_SESSION"
TOKEN_VARIABLE = "COCKPIT_PLAN_TOKEN"

SERVER_NAME = "cockpit-plan"
"""The name the plan server has among the MCP servers an agent is handed."""

UPDATE = "update_plan"
READ = "read_plan"
METHODS = (UPDATE, READ)
"""The only calls a plan token may make."""

STATUSES = ("pending", "in_progress", "completed", "cancelled")
PRIORITIES = ("high", "medium", "low")

MOST_ITEMS = 50
"""Items a plan may hold."""

MOST_ITEM_CHARS = 500
"""Characters an item's content may hold."""

MOST_EXPLANATION_CHARS = 2000
"""Characters an explanation may hold."""

MOST_LINE_BYTES = 256 * 1024
"""Bytes one line of this protocol may hold: a full plan at its bounds fits many times."""


def read_items(items: object) -> tuple[PlanEntry, ...] | str:
    """The items of an `update_plan` call, or why they are refused (a sentence the model
    can act on): a list of at most MOST_ITEMS objects, each with a non-empty `content` of
    at most MOST_ITEM_CHARS characters, a `status` of STATUSES and an optional `priority`
    of PRIORITIES."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        return "Not saved: `items` must be a list of steps, each {content, status, priority?}."
    if len(items) > MOST_ITEMS:
        return f"Not saved: a plan holds at most {MOST_ITEMS} items; this one has {len(items)}."
    found: list[PlanEntry] = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            return f"Not saved: item {number} must be an object with `content` and `status`."
        content, status, priority = item.get("content"), item.get("status", "pending"), None
        if not isinstance(content, str) or not content.strip():
            return f"Not saved: item {number} needs a non-empty `content`."
        if len(content) > MOST_ITEM_CHARS:
            return (
                f"Not saved: item {number} has {len(content)} characters; an item holds at"
                f" most {MOST_ITEM_CHARS}. Say it shorter."
            )
        if status not in STATUSES:
            allowed = ", ".join(STATUSES)
            return f"Not saved: item {number} has status {status!r}; use one of {allowed}."
        if item.get("priority") is not None:
            priority = item.get("priority")
            if priority not in PRIORITIES:
                return (
                    f"Not saved: item {number} has priority {priority!r}; use one of"
                    f" {', '.join(PRIORITIES)}, or leave it out."
                )
        found.append(PlanEntry(content.strip(), str(status), priority))
    return tuple(found)


def read_explanation(explanation: object) -> str | Literal[False] | None:
    """An explanation as kept (None when there is none), or False when it is refused."""
    if explanation is None or explanation == "":
        return None
    if not isinstance(explanation, str) or len(explanation) > MOST_EXPLANATION_CHARS:
        return False
    return explanation


def progress(items: Sequence[PlanEntry]) -> str:
    """How far a plan is, in words: "2 of 5 done" (cancelled items counted out)."""
    counted = [item for item in items if item.status != "cancelled"]
    done = sum(1 for item in counted if item.status == "completed")
    running = [item.content for item in counted if item.status == "in_progress"]
    words = f"{done} of {len(counted)} done"
    return f"{words}; in progress: {running[0]}" if running else words


def item_to_wire(item: PlanEntry) -> dict[str, Any]:
    """An item as the wire and the store have it (ACP's plan entry, plus `cancelled`)."""
    wire: dict[str, Any] = {"content": item.content, "status": item.status}
    if item.priority is not None:
        wire["priority"] = item.priority
    return wire


AUTHORS = ("tool", "agent", "user")
"""Who wrote a plan: the plan tool, the agent's own ACP plan updates, or the user."""

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]", "cancelled": "[-]"}
"""How a checklist shows each status."""


def checklist(entries: Sequence[PlanEntry]) -> str:
    """A plan as the user edits it: one step a line, its status a mark in front."""
    return "".join(f"{PLAN_MARKS.get(e.status, '[ ]')} {e.content}\n" for e in entries)


def read_checklist(text: str, before: Sequence[PlanEntry] = ()) -> tuple[PlanEntry, ...] | str:
    """The plan a checklist the user edited says (a line without a mark is a pending step;
    a step keeps the priority it had `before`), or why it cannot be one."""
    marks = {mark: status for status, mark in PLAN_MARKS.items()}
    marks["[X]"] = "completed"
    priorities = {entry.content: entry.priority for entry in before}
    items: list[dict[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        status = marks.get(line[:3], "")
        content = line[3:].strip() if status else line
        item: dict[str, Any] = {"content": content, "status": status or "pending"}
        if priorities.get(content):
            item["priority"] = priorities[content]
        items.append(item)
    return read_items(items)


def plan_to_wire(
    revision: int, author: str, items: Sequence[PlanEntry], explanation: str | None
) -> dict[str, Any]:
    """A plan as an answer carries it."""
    return {
        "revision": revision,
        "author": author,
        "items": [item_to_wire(item) for item in items],
        "explanation": explanation,
    }


def plan_text(plan: Mapping[str, Any] | None) -> str:
    """A plan in words the model reads: its revision, who wrote it, how far it is, and
    each item with its status mark."""
    if plan is None:
        return "This session has no plan yet. Write one with update_plan."
    items = read_items(plan.get("items") or [])
    if isinstance(items, str):
        items = ()
    author = {"tool": "update_plan", "agent": "the agent's own plan", "user": "the user"}
    lines = [
        f"Plan revision {plan.get('revision')}, written by"
        f" {author.get(str(plan.get('author')), 'unknown')}: {progress(items)}."
    ]
    if plan.get("explanation"):
        lines.append(f"Explanation: {plan['explanation']}")
    lines += [f"{n}. {PLAN_MARKS[i.status]} {i.content}" for n, i in enumerate(items, 1)]
    return "\n".join(lines)


# -- the wire ---------------------------------------------------------------------------------


def request_line(token: str, session: str, method: str, params: Mapping[str, Any]) -> bytes:
    """One call, as the plan server writes it."""
    asked = {"token": token, "session": session, "method": method, "params": dict(params)}
    return json.dumps(asked, ensure_ascii=False).encode("utf-8") + b"\n"


def answer_line(ok: bool, text: str, plan: Mapping[str, Any] | None = None) -> bytes:
    """One answer, as the engine writes it: whether the call did what it asked, the words
    the model reads, and the plan as it now stands (when there is one)."""
    answer = {"ok": ok, "text": text, "plan": dict(plan) if plan is not None else None}
    return json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n"


def read_line(line: bytes) -> dict[str, Any] | None:
    """A line read back as an object; None when it is not one."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
