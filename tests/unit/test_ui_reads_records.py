"""The UI reads the contract's typed records (`cockpit.records`), not ACP JSON: no module
of `cockpit/ui` looks up an ACP key in a mapping. Checked over the syntax tree, so that it
stays true."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cockpit.ui

ACP_KEYS = frozenset(
    {
        "toolCallId",
        "oldText",
        "newText",
        "terminalId",
        "terminalOutput",
        "rawOutput",
        "rawInput",
        "exitStatus",
        "exitCode",
        "optionId",
        "currentModeId",
        "availableModes",
        "currentValue",
        "lastTurn",
        "inputTokens",
        "outputTokens",
        "thoughtTokens",
        "cachedReadTokens",
        "cachedWriteTokens",
        "sessionUpdate",
        "messageId",
        "stopReason",
        "configOptions",
        "availableCommands",
    }
)
"""The camelCase keys of ACP the UI read before it read records (and a few more it might
reach for next). Any other camelCase key counts too (`CAMEL`)."""

CAMEL = re.compile(r"^_?[a-z]+[A-Z][A-Za-z0-9]*$")

UI = Path(cockpit.ui.__file__).parent


def keys_read(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) of every string literal used as a key: `x.get("k")`, `x["k"]`,
    `x.pop("k")`, `x.setdefault("k")`, and `"k" in x`."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        key: ast.expr | None = None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
        ):
            key = node.args[0]
        elif isinstance(node, ast.Subscript):
            key = node.slice
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In | ast.NotIn):
            key = node.left
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            found.append((node.lineno, key.value))
    return found


def acp_reads(source: str) -> list[tuple[int, str]]:
    """The ACP keys a module's source looks up."""
    return [
        (line, key)
        for line, key in keys_read(ast.parse(source))
        if key in ACP_KEYS or CAMEL.match(key)
    ]


def test_no_module_of_the_ui_reads_an_acp_key() -> None:
    reads = {
        f"{path.relative_to(UI)}:{line}": key
        for path in sorted(UI.rglob("*.py"))
        for line, key in acp_reads(path.read_text(encoding="utf-8"))
    }
    assert reads == {}


def test_the_check_sees_every_way_of_reading_a_key() -> None:
    source = """
payload.get("oldText")
item["terminalId"]
usage.pop("lastTurn", None)
"optionId" in option
modes.get("someNewKey")
payload.get("title"), payload["kind"], payload.get(name)
"""
    assert acp_reads(source) == [
        (2, "oldText"),
        (3, "terminalId"),
        (4, "lastTurn"),
        (5, "optionId"),
        (6, "someNewKey"),
    ]
