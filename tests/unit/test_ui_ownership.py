"""Each part of the app owns its state: no module in `cockpit/ui` reads or writes another
object's underscore attributes (`self.app._x`, `other._y`, `app._create_session`). What a
part offers others is public; what it keeps is its own."""

from __future__ import annotations

import ast
from pathlib import Path

import cockpit.ui

UI = Path(cockpit.ui.__file__).parent

OWN = frozenset({"self", "cls"})
"""Names whose underscore attributes a module may touch: the object's own."""

ALLOWED: frozenset[tuple[str, str]] = frozenset()
"""(module, attribute access) pairs Textual's own API would force; none does today."""


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def is_own(value: ast.expr) -> bool:
    """`self`, `cls`, or `super()`."""
    if isinstance(value, ast.Name):
        return value.id in OWN
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def foreign_private_accesses(root: Path) -> list[str]:
    """Every `X._name` under `root` whose X is not the object itself, as `module:line
    source`."""
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                continue
            if is_dunder(node.attr) or is_own(node.value):
                continue
            if (module, ast.unparse(node)) in ALLOWED:
                continue
            found.append((module, node.lineno, ast.unparse(node)))
    return [f"{module}:{line} {source}" for module, line, source in sorted(found)]


def test_no_ui_module_touches_another_objects_underscore_attributes() -> None:
    assert foreign_private_accesses(UI) == []


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    (tmp_path / "part.py").write_text(
        "class Part:\n"
        "    def run(self, app, other):\n"
        "        self._mine = 1\n"
        "        super()._setup()\n"
        "        type(self).__name__\n"
        "        app._create_session()\n"
        "        other.rail._styles\n"
    )
    assert foreign_private_accesses(tmp_path) == [
        "part.py:6 app._create_session",
        "part.py:7 other.rail._styles",
    ]
