"""Where the command line meets the engine: the one module of `cockpit.cli` that imports
it. Today the engine runs in this process; the service will be reached from here. Every
other module of the command line is typed against `cockpit.api`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from cockpit.api import (
    DEFAULT_AGENT,
    AgentInfo,
    AgentSpec,
    EngineAPI,
    PermissionRequest,
    StartError,
)
from cockpit.engine.core import Engine
from cockpit.engine.errors import describe
from cockpit.engine.permissions import policy_choice
from cockpit.engine.registry import (
    MISSING_FILE_POLICIES,
    Registry,
    agent_from_command,
    executable,
    load_registry,
)

__all__ = [
    "MISSING_FILE_POLICIES",
    "Registry",
    "StartError",
    "describe",
    "known_agents",
    "load_registry",
    "open_engine",
    "policy_choice",
    "resolve_agent",
]


async def open_engine(
    home: Path,
    *,
    registry: Registry | None = None,
    policy: Callable[[PermissionRequest], str | None] | None = None,
    handshake_timeout: float | None = None,
) -> EngineAPI:
    """The engine of the store in `home` (`policy` answers permission requests before the
    rules and the user do: `cockpit run --yes`)."""
    if handshake_timeout is None:
        return await Engine.open(home, registry=registry, policy=policy)
    return await Engine.open(
        home, registry=registry, policy=policy, handshake_timeout=handshake_timeout
    )


def known_agents(registry: Registry) -> list[AgentInfo]:
    """Every agent of `registry`, and whether its program is installed here."""
    return [AgentInfo(spec, executable(spec) is not None) for spec in registry.agents.values()]


def resolve_agent(args: argparse.Namespace, registry: Registry) -> AgentSpec:
    """The agent a command line names: `--agent NAME`, or `--agent-cmd "CMD ARGS"` (with
    the settings of the registered agent whose program it runs, and `--missing-file`);
    KeyError or ValueError, saying why, when there is none."""
    if args.agent_cmd:
        return agent_from_command(args.agent_cmd, registry.agents, missing_file=args.missing_file)
    if args.missing_file is not None:
        raise ValueError(
            "--missing-file goes with --agent-cmd (set a registered agent's missing_file in"
            " agents.toml in Cockpit's config folder)"
        )
    return registry.get(args.agent or DEFAULT_AGENT)
