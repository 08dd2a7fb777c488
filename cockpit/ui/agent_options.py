"""The modes and config options an agent offers, read from a session record: the current
mode and model, the other options the status line shows, and every value the options
screen can set. No Textual here, so every rule is tested without an app."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cockpit.ui.one_line import clean_line
from store import SessionRecord


def current_mode(record: SessionRecord) -> str | None:
    """The name of the session's current mode, from its modes or its mode config option."""
    for option in record.config_options or ():
        if option.get("category") == "mode":
            return option_value_name(option)
    modes = record.modes or {}
    current = modes.get("currentModeId")
    for mode in modes.get("availableModes") or ():
        if isinstance(mode, Mapping) and mode.get("id") == current:
            return str(mode.get("name") or current)
    return str(current) if current else None


def option_value_name(option: Mapping[str, Any]) -> str | None:
    """The display name of a select option's current value."""
    value = option.get("currentValue")
    choices: list[Any] = []
    for entry in option.get("options") or ():
        if isinstance(entry, Mapping) and "options" in entry:  # a group
            choices.extend(entry.get("options") or ())
        else:
            choices.append(entry)
    for choice in choices:
        if isinstance(choice, Mapping) and choice.get("value") == value:
            return str(choice.get("name") or value)
    return str(value) if value is not None else None


def current_model(record: SessionRecord) -> str | None:
    """The name of the model the session uses, when the agent exposes it as an option."""
    for option in record.config_options or ():
        if option.get("category") == "model" or option.get("id") == "model":
            return option_value_name(option)
    return None


def other_options(record: SessionRecord) -> list[tuple[str, str]]:
    """(name, current value) of the select options that are neither the mode nor the model
    (the Claude agent's Thinking level, say)."""
    shown = []
    for option in record.config_options or ():
        if option.get("type") == "boolean" or option.get("category") in ("mode", "model"):
            continue
        if option.get("id") == "model":
            continue
        value = option_value_name(option)
        if value is not None:
            shown.append(
                (clean_line(str(option.get("name") or option.get("id"))), clean_line(value))
            )
    return shown


def mode_option_id(record: SessionRecord) -> str | None:
    """The id of the config option that holds the mode, when the agent has one."""
    for option in record.config_options or ():
        if option.get("category") == "mode":
            return str(option.get("id"))
    return None


def _values(option: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    values: list[Mapping[str, Any]] = []
    for entry in option.get("options") or ():
        if isinstance(entry, Mapping) and "options" in entry:
            values.extend(v for v in entry.get("options") or () if isinstance(v, Mapping))
        elif isinstance(entry, Mapping):
            values.append(entry)
    return values


@dataclass(frozen=True)
class OptionChoice:
    """A value the options screen can set: a config option's value, or a mode."""

    config_id: str | None
    """None for a mode (set with session/set_mode)."""
    value: str | bool
    label: str
    current: bool


def option_choices(record: SessionRecord) -> list[OptionChoice]:
    """Every value the user can pick: each select option's values, each boolean option's
    other value, and the modes (unless a config option already holds the mode)."""
    choices: list[OptionChoice] = []
    for option in record.config_options or ():
        name = str(option.get("name") or option.get("id"))
        if option.get("type") == "boolean":
            current = bool(option.get("currentValue"))
            choices.append(
                OptionChoice(
                    str(option["id"]), not current, f"{name}: {'off' if current else 'on'}", False
                )
            )
            continue
        for value in _values(option):
            label = f"{name}: {value.get('name') or value.get('value')}"
            is_current = value.get("value") == option.get("currentValue")
            choices.append(
                OptionChoice(str(option["id"]), str(value.get("value")), label, is_current)
            )
    if mode_option_id(record) is None:
        modes = record.modes or {}
        for mode in modes.get("availableModes") or ():
            if isinstance(mode, Mapping):
                label = f"Mode: {mode.get('name') or mode.get('id')}"
                choices.append(
                    OptionChoice(
                        None,
                        str(mode.get("id")),
                        label,
                        mode.get("id") == modes.get("currentModeId"),
                    )
                )
    return choices
