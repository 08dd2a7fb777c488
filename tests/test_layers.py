"""The layers stay apart: `store` loads neither Textual, Rich nor the ACP SDK."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import store

ROOT = Path(__file__).resolve().parent.parent


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
    modules = ["store"] + [
        f"store.{info.name}"
        for info in pkgutil.iter_modules(store.__path__)
        if info.name != "__main__"
    ]
    loaded = loaded_after_import(modules)
    assert "store" in loaded
    assert "aiosqlite" in loaded
    assert not loaded & {"textual", "rich", "acp", "anthropic", "platformdirs"}


ENGINE_MODULES = [
    "cockpit.engine.core",
    "cockpit.engine.session",
    "cockpit.cli.main",
    "cockpit.engine.agent_process",
    "cockpit.engine.transport",
    "cockpit.engine.registry",
    "cockpit.engine.files",
    "cockpit.engine.terminals",
    "cockpit.engine.permissions",
    "cockpit.api",
    "cockpit.text.sanitize",
    "cockpit.text.textout",
    "cockpit.paths",
    "cockpit.paths",
    "cockpit.cli.chunk_log",
]


def test_the_engine_and_command_line_import_no_textual() -> None:
    loaded = loaded_after_import(ENGINE_MODULES)
    assert {"cockpit", "store", "acp"} <= loaded
    assert "textual" not in loaded


def test_acp_folder_is_not_an_importable_package() -> None:
    assert not (ROOT / "acp" / "__init__.py").exists()
    code = "import acp, sys; print(acp.__file__)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "site-packages" in result.stdout  # the SDK, not our folder
