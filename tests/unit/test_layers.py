"""The layers stay apart at run time: importing a layer, module by module, in a fresh
interpreter loads no Textual (and, for `store`, neither Rich nor any SDK); the service
loads none of its clients, a client none of the service or the engine, and the contract
and its wire no side at all.

The import rules themselves are `lint-imports` contracts in pyproject.toml, checked by CI;
this is the run-time side of them (a lazy or dynamic import escapes a static graph). The
modules are discovered with pkgutil, so a new module is covered the day it is added.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Command-line modules that may load Textual when imported: the one that starts the TUI.
TUI_STARTERS = {"cockpit.cli.tui"}


def modules_of(package: str) -> list[str]:
    """`package` and every module under it (a `__main__` runs, so it is left out)."""
    found = [package]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        return found
    for info in pkgutil.walk_packages(spec.submodule_search_locations, prefix=f"{package}."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            found.append(info.name)
    return found


def loaded_after_import(modules: list[str]) -> set[str]:
    """Import `modules` in a fresh interpreter; return the top-level packages it loaded."""
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def test_store_imports_no_ui_and_no_sdk() -> None:
    loaded = loaded_after_import(modules_of("store"))
    assert "store" in loaded
    assert "aiosqlite" in loaded
    assert not loaded & {"textual", "rich", "acp", "anthropic", "platformdirs"}


def test_the_engine_imports_no_textual() -> None:
    loaded = loaded_after_import(modules_of("cockpit.engine"))
    assert {"cockpit", "store", "acp"} <= loaded
    assert "textual" not in loaded


def test_the_command_line_imports_no_textual_until_it_starts_the_tui() -> None:
    modules = [name for name in modules_of("cockpit.cli") if name not in TUI_STARTERS]
    loaded = loaded_after_import(modules)
    assert {"cockpit", "store", "acp"} <= loaded
    assert "textual" not in loaded


def test_what_builds_a_clients_engine_imports_no_textual() -> None:
    """`cockpit.client` opens the engine for the command line before any screen exists."""
    loaded = loaded_after_import(["cockpit.client"])
    assert {"cockpit", "store", "acp"} <= loaded
    assert "textual" not in loaded


SHARED_LAYERS = [
    "cockpit.api",
    "cockpit.protocol",
    "cockpit.channel",
    "cockpit.listeners",
    "cockpit.pending",
    "cockpit.bounds",
    "cockpit.lines",
    "cockpit.text",
    "cockpit.paths",
    "cockpit.environment",
    "cockpit.config_file",
    "cockpit.records",
    "cockpit.inside_root",
    "cockpit.atomic_file",
    "cockpit.policy_rule",
    "cockpit.folder_completion",
    "cockpit.agentkit",
]


@pytest.mark.parametrize("layer", SHARED_LAYERS)
def test_shared_layers_import_no_textual(layer: str) -> None:
    loaded = loaded_after_import(modules_of(layer))
    assert "cockpit" in loaded
    assert "textual" not in loaded


def test_the_plan_tool_loads_mcp_and_the_plans_protocol_alone() -> None:
    """The plan tool runs in every session: no SDK of an agent, no store, no engine."""
    loaded = loaded_after_import(modules_of("cockpit.plan_server"))
    assert {"cockpit", "mcp"} <= loaded
    assert not loaded & {"acp", "textual", "rich", "store", "aiosqlite", "anthropic"}
    cockpit = cockpit_modules_after_import(modules_of("cockpit.plan_server"))
    plan = {"cockpit", "cockpit.plan_protocol", "cockpit.records", "cockpit.text.command_line"}
    assert cockpit <= plan | {"cockpit.text"} | under(cockpit, "cockpit.compat") | (
        under(cockpit, "cockpit.plan_server")
    )


def cockpit_modules_after_import(modules: list[str]) -> set[str]:
    """Import `modules` in a fresh interpreter; return every module of Cockpit it loaded."""
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('cockpit'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def under(modules: set[str], package: str) -> set[str]:
    return {name for name in modules if name == package or name.startswith(f"{package}.")}


def test_the_service_loads_none_of_its_clients_and_no_textual() -> None:
    modules = modules_of("cockpit.service")
    assert not under(cockpit_modules_after_import(modules), "cockpit.remote")
    assert "textual" not in loaded_after_import(modules)


def test_a_client_of_the_service_loads_no_engine_no_service_and_no_textual() -> None:
    modules = modules_of("cockpit.remote")
    loaded = cockpit_modules_after_import(modules)
    assert not under(loaded, "cockpit.service")
    assert not under(loaded, "cockpit.engine")
    assert not loaded_after_import(modules) & {"textual", "aiosqlite"}


def test_the_contract_and_its_wire_load_no_side() -> None:
    loaded = cockpit_modules_after_import(["cockpit.api", "cockpit.protocol", "cockpit.channel"])
    for side in (
        "cockpit.engine",
        "cockpit.service",
        "cockpit.remote",
        "cockpit.ui",
        "cockpit.cli",
    ):
        assert not under(loaded, side), side


def test_acp_folder_is_not_an_importable_package() -> None:
    assert not (ROOT / "acp" / "__init__.py").exists()
    code = "import acp, sys; print(acp.__file__)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "site-packages" in result.stdout  # the SDK, not our folder
