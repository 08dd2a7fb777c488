"""Where the bundled agents (`acp/`) and themes (`themes/`) are.

In a source checkout they sit beside the `cockpit` package; an installed wheel carries
them inside it as `cockpit/bundled/` (a top-level `acp` folder would shadow the SDK).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def bundled_dir(name: str) -> Path:
    """The bundled folder `name` ("acp" or "themes")."""
    inside = _PACKAGE / "bundled" / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name


def agents_dir() -> Path:
    """The folder of the bundled ACP agents and their registry."""
    return bundled_dir("acp")
