"""The demo's forms: a question for the user with one field of each kind the protocol
has (`elicitation/create`, form mode), and a link to open (URL mode) that the agent then
says is done (`elicitation/complete`). Each reply says what came back, so a test reads
the answer in the transcript."""

from __future__ import annotations

import json
import uuid
from typing import Any

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
)
from pydantic import AnyUrl

from cockpit.agentkit.demo.turn import Turn

FORM_MESSAGE = "Before I set up the project, tell me a few things."
LINK_MESSAGE = "Sign in to the demo service in your browser."
LINK_URL = "https://example.com/demo/sign-in"

FORM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Project setup",
    "properties": {
        "name": {"type": "string", "title": "Project name", "minLength": 1, "maxLength": 40,
                 "description": "Shown in the README", "default": "demo"},
        "api_token": {"type": "string", "title": "API token"},
        "workers": {"type": "integer", "title": "Workers", "minimum": 1, "maximum": 16,
                    "default": 4},
        "ratio": {"type": "number", "title": "Sample ratio", "minimum": 0, "maximum": 1},
        "tests": {"type": "boolean", "title": "Write tests", "default": True},
        "licence": {"type": "string", "title": "Licence",
                    "oneOf": [{"const": "mit", "title": "MIT"},
                              {"const": "apache", "title": "Apache 2.0"},
                              {"const": "gpl", "title": "GPL 3"}]},
        "targets": {"type": "array", "title": "Targets", "minItems": 1,
                    "items": {"type": "string", "enum": ["linux", "macos", "windows"]},
                    "default": ["linux"]},
    },
    "required": ["name", "licence"],
}  # fmt: skip
"""One field of each kind: text (and a secret one), whole number, number, yes/no, one of
a list, any of a list."""


async def run_form(turn: Turn) -> None:
    """Ask the form; say what the user answered (a secret's length, never its value)."""
    mode = ElicitationFormSessionMode(
        session_id=turn.session_id, requested_schema=ElicitationSchema.model_validate(FORM_SCHEMA)
    )
    await turn.say("I have a few questions first.")
    try:
        response = await turn.conn.create_elicitation(message=FORM_MESSAGE, mode=mode)
    except RequestError as error:
        await turn.say(f"The client would not show my form: {error}.")
        return
    if isinstance(response, AcceptElicitationResponse):
        content = dict(response.content or {})
        if isinstance(content.get("api_token"), str):
            content["api_token"] = f"<{len(content['api_token'])} characters>"
        await turn.say(f"Form answered: {json.dumps(content, sort_keys=True)}")
    else:
        await turn.say(f"Form {response.action}.")


async def run_link(turn: Turn) -> None:
    """Ask the user to open a link; once they accept, say the task behind it is done."""
    elicitation_id = uuid.uuid4().hex[:8]
    mode = ElicitationUrlSessionMode(
        session_id=turn.session_id, elicitation_id=elicitation_id, url=AnyUrl(LINK_URL)
    )
    try:
        response = await turn.conn.create_elicitation(message=LINK_MESSAGE, mode=mode)
    except RequestError as error:
        await turn.say(f"The client would not show my link: {error}.")
        return
    if isinstance(response, AcceptElicitationResponse):
        await turn.conn.complete_elicitation(elicitation_id=elicitation_id)
        await turn.say("Signed in.")
    else:
        await turn.say(f"Link {response.action}.")
