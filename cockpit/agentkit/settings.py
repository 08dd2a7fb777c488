"""The session settings a bundled agent offers a client: its modes and its option
selectors, as ACP describes them."""

from __future__ import annotations

from typing import Any

from acp.core import RequestError
from acp.schema import (
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

MODES = {"ask": "Ask before edits", "accept": "Accept edits", "plan": "Plan only"}
"""The modes every bundled agent has: ask (edits ask first), accept (edits go ahead),
plan (nothing changes)."""
DEFAULT_MODE = "ask"


def session_modes(current: str) -> SessionModeState:
    """The mode list, with `current` selected."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=name) for mode, name in MODES.items()],
    )


def check_mode(mode_id: str) -> None:
    """An invalid-params error, naming the known modes, unless `mode_id` is one."""
    if mode_id not in MODES:
        raise RequestError.invalid_params({"modeId": mode_id, "known": list(MODES)})


def select_option(
    option: str, name: str, category: Any, value: str, choices: dict[str, str]
) -> SessionConfigOptionSelect:
    """One selector config option with `value` selected among `choices` (value -> name)."""
    return SessionConfigOptionSelect(
        type="select",
        id=option,
        name=name,
        category=category,
        current_value=value,
        options=[SessionConfigSelectOption(value=v, name=n) for v, n in choices.items()],
    )
