"""The pure rule of which requests the SDK refuses (`cockpit.engine.refusals.refusal`),
checked against the SDK's own client router, and the rows it makes: printable, bounded."""

from __future__ import annotations

import asyncio
from typing import Any

from acp import RequestError
from acp.client.router import build_client_router
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from cockpit.engine.refusals import (
    PERMISSION,
    REQUEST_SCHEMAS,
    count_row,
    refusal,
    refusal_row,
)

VALID: dict[str, dict[str, Any]] = {
    PERMISSION: {
        "sessionId": "s",
        "toolCall": {"toolCallId": "c", "title": "Delete"},
        "options": [{"optionId": "y", "name": "Yes", "kind": "allow_once"}],
    },
    "fs/read_text_file": {"sessionId": "s", "path": "/a", "line": 1, "limit": 2},
    "fs/write_text_file": {"sessionId": "s", "path": "/a", "content": "x"},
    "terminal/create": {"sessionId": "s", "command": "ls", "args": ["-l"], "cwd": "/a",
                        "env": [{"name": "A", "value": "b"}], "outputByteLimit": 10},
    "terminal/output": {"sessionId": "s", "terminalId": "t"},
    "terminal/wait_for_exit": {"sessionId": "s", "terminalId": "t"},
    "terminal/kill": {"sessionId": "s", "terminalId": "t"},
    "terminal/release": {"sessionId": "s", "terminalId": "t"},
    "elicitation/create": {"sessionId": "s", "message": "m", "mode": "form",
                           "requestedSchema": {"properties": {"a": {"type": "string"}}}},
}  # fmt: skip
"""A request of each method Cockpit serves, as an agent that follows ACP sends it."""

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=12,
)


class Reached(Exception):
    """The SDK handed the request on to the client."""


class Client:
    """Whatever the SDK calls, it reached the client."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        async def reached(*args: Any, **kwargs: Any) -> None:
            if name == "ext_method":  # as `ClientAdapter.ext_method` answers
                raise RequestError.method_not_found(args[0])
            raise Reached(name)

        return reached


ROUTER = build_client_router(Client(), use_unstable_protocol=True)  # as Cockpit opts in


def sdk_refuses(method: str, params: Any) -> bool:
    """Whether the SDK's client router answers this request with an error by itself."""

    async def route() -> bool:
        try:
            await ROUTER(method, params, False)
        except Reached:
            return False
        except ValidationError:
            return True  # the SDK answers it "Invalid params"
        except RequestError as error:
            return error.code in (-32601, -32602)
        return False

    return asyncio.run(route())


def test_every_valid_request_passes_and_the_table_names_every_served_method() -> None:
    assert set(VALID) == set(REQUEST_SCHEMAS)
    for method, params in VALID.items():
        assert not sdk_refuses(method, params), method
        assert refusal({"id": 1, "method": method, "params": params}) is None


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, Any]:
    """A request of a served method with one field spoilt, dropped or added, its params
    replaced whole, or a request of another method."""
    method = draw(st.sampled_from([*VALID, "no/such", "_ext/x", "session/update"]))
    params: Any = dict(VALID.get(method, {"sessionId": "s"}))
    action = draw(st.sampled_from(["spoil", "drop", "add", "replace"]))
    name = draw(st.sampled_from([*params, "toolCall", "_meta"]))
    if action == "spoil":
        params[name] = draw(JSON)
    elif action == "drop":
        params.pop(name, None)
    elif action == "add":
        params[draw(st.text(max_size=5))] = draw(JSON)
    else:
        params = draw(JSON)
    return method, params


@given(requests())
def test_a_request_is_refused_exactly_when_the_sdk_refuses_it(request: tuple[str, Any]) -> None:
    method, params = request
    found = refusal({"id": 7, "method": method, "params": params})
    assert (found is not None) == sdk_refuses(method, params)


@given(
    st.sampled_from([*VALID, "no/such", "\x1b[2Jclear/" + "x" * 500]),
    JSON | st.dictionaries(st.sampled_from(["toolCall", "path", "command", "options"]),
                           st.text(max_size=300) | JSON, max_size=3),
)  # fmt: skip
def test_a_refusal_row_is_printable_and_bounded(method: str, params: Any) -> None:
    found = refusal({"id": 7, "method": method, "params": params})
    if found is None:
        return
    row = refusal_row("s", found)
    assert row.text.isprintable() and len(row.text) < 1000, row.text
    assert row.update == ("permission" if method == PERMISSION else "notice")
    assert len(row.data["received"]) <= 4096


def test_the_title_of_a_refused_question_is_shown_escaped() -> None:
    params = {"sessionId": "s", "toolCall": {"toolCallId": 7, "title": "rm \x1b[31m-rf"}}
    found = refusal({"id": 1, "method": PERMISSION, "params": params})
    assert found is not None and found.subject == "rm \\x1b[31m-rf"
    assert refusal_row("s", found).text.startswith("Refused: rm \\x1b[31m-rf (not a valid ACP")


def test_the_count_is_one_row_per_turn_under_one_id() -> None:
    one, many = count_row("s", 1), count_row("s", 150)
    assert one.message_id == many.message_id
    assert one.text.startswith("…and 1 more refused request this turn")
    assert many.text.startswith("…and 150 more refused requests this turn")
    assert many.data == {"refusedCount": 150}
