"""The demo session's choices as ACP carries them: its models (the one config option) and
its slash commands."""

from __future__ import annotations

from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    UnstructuredCommandInput,
)

from cockpit.agentkit.settings import select_option

MODELS = {"demo-fast": "Fast", "demo-smart": "Smart"}
DEFAULT_MODEL = "demo-fast"
MODEL_OPTION_ID = "model"

COMMANDS = {
    "tour": "A guided tour of Cockpit",
    "table": "A long markdown reply",
    "tools": "Read, edit and run, with permission",
    "plan": "A three-step plan",
}
MORE_COMMANDS = {**COMMANDS, "deploy": "Pretend to deploy somewhere"}
COMMAND_HINTS = {"plan": "what to plan", "deploy": "environment"}


def config_options(model: str) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The full config option list: one model selector with `model` selected."""
    return [select_option(MODEL_OPTION_ID, "Model", "model", model, MODELS)]


def command_list(commands: dict[str, str]) -> AvailableCommandsUpdate:
    """An `available_commands_update` for `commands`, with input hints where they apply."""
    return update_available_commands(
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=COMMAND_HINTS[name]))
            if name in COMMAND_HINTS
            else None,
        )
        for name, description in commands.items()
    )
