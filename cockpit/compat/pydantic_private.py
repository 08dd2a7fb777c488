"""The two private parts of pydantic Cockpit touches, and why. `tests/test_compat_pydantic.py`
checks them against what is installed, so an upgrade that moves one fails there, by name.
Checked with pydantic 2.14 (`TESTED_WITH`).

The ACP SDK's schema asks pydantic for `use_attribute_docstrings`: for each of its ~280
models pydantic finds the class's source text, tokenizes and parses it, to copy each
field's docstring into the field's description. That is about 0.2 s of CPU (half the
SDK's import) in every process that imports `acp`: every agent Cockpit ships, every
`cockpit` command, the service. The descriptions only ever reach a JSON Schema export,
which neither Cockpit nor the SDK makes at run time, so Cockpit skips that step for the
SDK's schema module only; every other model keeps its docstrings.

Then each model is built when it is first used rather than when its class is defined
(pydantic's public `defer_build` setting, made the default through pydantic's private table
of defaults): a process builds the few dozen models it validates, not the ~280 of the ACP
SDK's schema and the many hundreds of the Anthropic SDK's. A `cockpit run` of the demo
agent (two processes) takes about 12% less CPU, the bundled Claude agent's start 0.15 s
less; the models, once built, check the same way.
"""

from __future__ import annotations

from typing import Any

from pydantic._internal import _config, _fields

TESTED_WITH = "2.14"
"""The pydantic version this was checked against."""

SKIPPED_MODULES = frozenset({"acp.schema"})
"""Modules whose models get no descriptions from their attribute docstrings."""

_HOOK = "_update_fields_from_docstrings"
"""The pydantic function that copies attribute docstrings into field descriptions."""

DEFER_BUILD = "defer_build"
"""The setting, in pydantic's table of defaults, that builds a model at its first use."""


def skip_schema_docstrings() -> None:
    """Make pydantic skip reading attribute docstrings for the models of `SKIPPED_MODULES`.

    Idempotent; must run before `acp` is first imported to have any effect. If pydantic no
    longer has the hook, nothing changes (the import is only slower) and the compat test
    says so."""
    original = getattr(_fields, _HOOK, None)
    if original is None or getattr(original, "cockpit_skips", False):
        return

    def update_unless_skipped(cls: type[Any], *args: Any, **kwargs: Any) -> None:
        if cls.__module__ not in SKIPPED_MODULES:
            original(cls, *args, **kwargs)

    update_unless_skipped.cockpit_skips = True  # type: ignore[attr-defined]
    setattr(_fields, _HOOK, update_unless_skipped)


def build_models_when_used() -> None:
    """Make pydantic build each model at its first use, for models that do not say
    otherwise. Idempotent; affects the models defined after it runs. If pydantic no longer
    keeps its defaults in that table, nothing changes and the compat test says so."""
    defaults = getattr(_config, "config_defaults", None)
    if isinstance(defaults, dict) and DEFER_BUILD in defaults:
        defaults[DEFER_BUILD] = True
