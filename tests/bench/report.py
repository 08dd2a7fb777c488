"""How a benchmark prints its figures: one JSON object (`--json`, with `target_met`), or
one line per figure, the one its target is about followed by the target and its verdict."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def print_result(
    result: Mapping[str, Any], *, as_json: bool, met: bool, key: str, target: str
) -> None:
    """Print `result`; `target` (say "target <= 100") goes after the figure `key`."""
    if as_json:
        print(json.dumps({**result, "target_met": met}, indent=2))
        return
    width = max(map(len, result))
    for name, value in result.items():
        said = f"  {target}: {'met' if met else 'MISSED'}" if name == key else ""
        print(f"{name:<{width}}  {value}{said}")
