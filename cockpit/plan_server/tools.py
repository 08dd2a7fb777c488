"""The two tools as the model sees them (their descriptions and input schema) and what
each call does: check locally, ask Cockpit, and answer in words the model can act on."""

from __future__ import annotations

import os
from typing import Annotated, Any

from mcp.types import CallToolResult, TextContent
from pydantic import WithJsonSchema

from cockpit.plan_protocol import (
    MOST_EXPLANATION_CHARS,
    MOST_ITEM_CHARS,
    MOST_ITEMS,
    PRIORITIES,
    READ,
    STATUSES,
    UPDATE,
    item_to_wire,
    plan_text,
    read_explanation,
    read_items,
)
from cockpit.plan_server.reach import Unanswered, answer_seconds, ask, reach_from_environment

UPDATE_DESCRIPTION = (
    "Save your plan for this task in Cockpit. Prefer this list to a todo list of your own:"
    " it survives restarts of the agent, the user sees it in Cockpit and may edit it, and"
    " every agent of the session sees the same list. Send the WHOLE list each time, as it"
    " stands now (every step, done ones included), with each step's status; keep one step"
    " in_progress while you work on it. `explanation` may say briefly why the plan changed."
)

READ_DESCRIPTION = (
    "Read this session's plan as Cockpit keeps it, whoever wrote it last (you, the agent's"
    " own plan, or the user, who may have edited it). Call it when you start or resume work,"
    " and before update_plan if the user may have changed the plan."
)

ITEMS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "maxItems": MOST_ITEMS,
    "description": "Every step of the plan, in order.",
    "items": {
        "type": "object",
        "properties": {
            "content": {"type": "string", "maxLength": MOST_ITEM_CHARS},
            "status": {"type": "string", "enum": list(STATUSES)},
            "priority": {"type": "string", "enum": list(PRIORITIES)},
        },
        "required": ["content", "status"],
    },
}

EXPLANATION_SCHEMA: dict[str, Any] = {
    "anyOf": [{"type": "string", "maxLength": MOST_EXPLANATION_CHARS}, {"type": "null"}],
    "default": None,
    "description": "Why the plan changed, in a sentence (optional).",
}

# The schemas tell the model the shape; the checks are `read_items`' own, so a refusal
# reads the same here as in Cockpit.
Items = Annotated[Any, WithJsonSchema(ITEMS_SCHEMA)]
Explanation = Annotated[Any, WithJsonSchema(EXPLANATION_SCHEMA)]


def failed(text: str) -> CallToolResult:
    """A tool result marked as an error: the model reads `text` and carries on."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def unreached(what: str, why: str) -> str:
    """The sentence for a call Cockpit did not answer."""
    return (
        f"Cockpit did not answer: the plan was not {what} ({why}). Carry on with the work"
        " and try again later; do not keep a separate plan of your own meanwhile."
    )


async def call(method: str, params: dict[str, Any], what: str) -> tuple[Any, str | None]:
    """Ask Cockpit `method`: its answer, or the sentence why there is none."""
    reach = reach_from_environment()
    if isinstance(reach, str):
        why = f"this plan tool was started without {reach}"
        return None, unreached(what, why)
    try:
        return await ask(reach, method, params, answer_seconds(os.environ)), None
    except Unanswered as error:
        return None, unreached(what, str(error))


async def update_plan(items: Items = None, explanation: Explanation = None) -> CallToolResult:
    """Check the plan, send it whole to Cockpit and say what Cockpit answered. `items`
    has a default only so that a call without it gets `read_items`' sentence rather than
    the SDK's validation report: the schema the model sees requires it."""
    checked = read_items(items)
    if isinstance(checked, str):
        return failed(checked)
    kept = read_explanation(explanation)
    if kept is False:
        return failed(
            f"Not saved: `explanation` must be a text of at most {MOST_EXPLANATION_CHARS}"
            " characters, or left out."
        )
    params = {"items": [item_to_wire(item) for item in checked], "explanation": kept}
    answer, trouble = await call(UPDATE, params, "saved")
    if trouble is not None:
        return failed(trouble)
    if not answer.ok:
        return failed(answer.text or "Cockpit refused the plan: it was not saved.")
    return CallToolResult(content=[TextContent(type="text", text=answer.text)])


async def read_plan() -> CallToolResult:
    """This session's plan in words, whoever wrote it."""
    answer, trouble = await call(READ, {}, "read")
    if trouble is not None:
        return failed(trouble)
    if not answer.ok:
        return failed(answer.text or "Cockpit refused to read the plan.")
    return CallToolResult(content=[TextContent(type="text", text=plan_text(answer.plan))])
