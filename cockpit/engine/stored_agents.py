"""Which agent a stored session runs: its registry entry, or the command it was created
with, and the settings it was given on the command line, which the session keeps."""

from __future__ import annotations

import dataclasses

from cockpit.api import AgentSpec
from cockpit.engine.registry import Registry, agent_from_command, with_overrides
from store import SessionRecord

AGENT_SETTINGS = "agent_settings"
"""The key of a session's info that holds the settings its agent was given on the command
line (an agent's own session info updates carry only their schema's fields)."""


def stored_agent(record: SessionRecord, registry: Registry) -> AgentSpec:
    """How to run a stored session's agent: the registry's entry for its name, else the
    command it was created with, taking the settings of the entry whose program that
    command runs; either way with the settings the session was given on the command
    line (`--missing-file`)."""
    if record.agent in registry.agents:
        spec = registry.agents[record.agent]
    else:
        spec = dataclasses.replace(
            agent_from_command(record.command, registry.agents),
            name=record.agent,
            source="stored session",
        )
    return with_overrides(spec, (record.info or {}).get(AGENT_SETTINGS) or {})
