"""The modes and config options an agent offers, read from a session record: the current
mode and model, the other options the status line shows, and every value the options
screen can set. No Textual here, so every rule is tested without an app."""

from __future__ import annotations

from dataclasses import dataclass

from cockpit.api import ConfigOption, read_config_option, read_modes
from cockpit.ui.one_line import clean_line
from store import SessionRecord


def config_options(record: SessionRecord) -> list[ConfigOption]:
    """The session's config options as records (one without an id is left out: nothing
    could set it)."""
    read = (read_config_option(option) for option in record.config_options or ())
    return [option for option in read if isinstance(option, ConfigOption)]


def current_mode(record: SessionRecord) -> str | None:
    """The name of the session's current mode, from its modes or its mode config option."""
    for option in config_options(record):
        if option.category == "mode":
            return option_value_name(option)
    modes = read_modes(record.modes)
    mode = modes.current
    return (mode.name or mode.id) if mode else modes.current_id


def option_value_name(option: ConfigOption) -> str | None:
    """The display name of a select option's current value."""
    return option.current_name


def model_option(record: SessionRecord) -> ConfigOption | None:
    """The config option that chooses the model (its category or its id says so), when
    the agent has one."""
    for option in config_options(record):
        if option.category == "model" or option.id == "model":
            return option
    return None


def current_model(record: SessionRecord) -> str | None:
    """The name of the model the session uses, when the agent exposes it as an option."""
    option = model_option(record)
    return option_value_name(option) if option is not None else None


def other_options(record: SessionRecord) -> list[tuple[str, str]]:
    """(name, current value) of the select options that are neither the mode nor the model
    (the Claude agent's Thinking level, say)."""
    shown = []
    for option in config_options(record):
        if option.type == "boolean" or option.category in ("mode", "model"):
            continue
        if option.id == "model":
            continue
        value = option_value_name(option)
        if value is not None:
            shown.append((clean_line(option.label), clean_line(value)))
    return shown


def mode_option_id(record: SessionRecord) -> str | None:
    """The id of the config option that holds the mode, when the agent has one."""
    for option in config_options(record):
        if option.category == "mode":
            return option.id
    return None


@dataclass(frozen=True)
class OptionChoice:
    """A value the options screen can set: a config option's value, or a mode."""

    config_id: str | None
    """None for a mode (set with session/set_mode)."""
    value: str | bool
    label: str
    current: bool


def model_choices(record: SessionRecord) -> list[OptionChoice]:
    """The values of the model option (none when the agent has no such option)."""
    option = model_option(record)
    if option is None:
        return []
    return [c for c in option_choices(record) if c.config_id == option.id]


def named_choice(choices: list[OptionChoice], name: str) -> OptionChoice | None:
    """The choice `name` means (any case): the one whose value or shown name is `name`,
    else the first whose value or shown name holds it (`/model smart`)."""
    wanted = name.strip().lower()
    if not wanted:
        return None
    names = [(str(c.value).lower(), c.label.partition(": ")[2].lower(), c) for c in choices]
    exact = (c for value, shown, c in names if wanted in (value, shown))
    partial = (c for value, shown, c in names if wanted in value or wanted in shown)
    return next(exact, None) or next(partial, None)


def option_choices(record: SessionRecord) -> list[OptionChoice]:
    """Every value the user can pick: each select option's values, each boolean option's
    other value, and the modes (unless a config option already holds the mode)."""
    choices: list[OptionChoice] = []
    for option in config_options(record):
        if option.type == "boolean":
            current = bool(option.current)
            choices.append(
                OptionChoice(
                    option.id, not current, f"{option.label}: {'off' if current else 'on'}", False
                )
            )
            continue
        for value in option.values:
            label = f"{option.label}: {value.name or value.value}"
            choices.append(
                OptionChoice(option.id, value.value, label, value.value == option.current)
            )
    if mode_option_id(record) is None:
        modes = read_modes(record.modes)
        for mode in modes.available:
            label = f"Mode: {mode.name or mode.id}"
            choices.append(OptionChoice(None, mode.id, label, mode.id == modes.current_id))
    return choices
