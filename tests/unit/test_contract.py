"""The contract's list of methods exists once (`cockpit.api.METHODS`), and everything that
names its methods derives from it: the calls the service runs (`protocol.CALLS`), the
reads a client sends again after a cut, the calls that may start an agent, and the names
the client over the socket sends. A method added to `EngineAPI` and not to the table, or
sent under another name, fails here."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from cockpit import protocol
from cockpit.api import METHODS, CallKind, EngineAPI
from cockpit.engine.core import Engine
from cockpit.remote.engine import RemoteEngine

REMOTE = Path(inspect.getfile(RemoteEngine)).parent


def contract_members() -> list[str]:
    return [name for name in vars(EngineAPI) if not name.startswith("_")]


def test_the_table_lists_every_member_of_the_contract_once_in_its_order() -> None:
    assert list(METHODS) == contract_members()


def test_the_protocols_sets_are_the_tables_kinds() -> None:
    calls = {name for name, kind in METHODS.items() if kind is not CallKind.LOCAL}
    assert calls == protocol.CALLS
    assert {name for name, kind in METHODS.items() if kind is CallKind.READ} == protocol.READS
    assert {name for name, kind in METHODS.items() if kind is CallKind.START} == protocol.STARTS
    assert protocol.READS <= protocol.CALLS
    assert protocol.STARTS <= protocol.CALLS


def test_both_engines_have_every_method() -> None:
    """(Properties may be plain attributes: mypy checks those, where each engine is
    returned as an `EngineAPI`.)"""
    for name in METHODS:
        if not inspect.isfunction(vars(EngineAPI)[name]):
            continue
        assert hasattr(Engine, name), f"Engine lacks {name}"
        assert hasattr(RemoteEngine, name), f"RemoteEngine lacks {name}"


def test_the_calls_that_may_start_an_agent_are_those_that_take_its_environment() -> None:
    """The service passes a START call its client's environment as `env`: the engine's
    methods that take one are exactly those."""
    for name in protocol.CALLS:
        takes_env = "env" in inspect.signature(getattr(Engine, name)).parameters
        assert takes_env == (name in protocol.STARTS), name


def sent_names() -> dict[str, set[str]]:
    """For each function of the client's modules, the names it sends as `cockpit/call`
    (the first argument of `self._call(...)`, a literal)."""
    sent: dict[str, set[str]] = {}
    for path in sorted(REMOTE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "_call"
                    and node.args
                ):
                    first = node.args[0]
                    assert isinstance(first, ast.Constant), (
                        f"{function.name} sends a name made at run time"
                    )
                    sent.setdefault(function.name, set()).add(str(first.value))
    return sent


def test_the_client_sends_every_call_and_each_method_under_its_own_name() -> None:
    sent = sent_names()
    every = set().union(*sent.values())
    assert every == protocol.CALLS, (
        f"sent but not calls: {every - protocol.CALLS}; never sent: {protocol.CALLS - every}"
    )
    for function, names in sent.items():
        if function in protocol.CALLS:
            assert names == {function}, f"RemoteEngine.{function} sends {names}"
