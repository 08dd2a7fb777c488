"""What the options every command shares say: where the engine is (`--local`, `--remote`,
`--via`) and which agent a new session runs (`--agent`, `--agent-cmd`, `--missing-file`)."""

from __future__ import annotations

import argparse

from cockpit.api import DEFAULT_AGENT, AgentSpec
from cockpit.client import Reach, agent_command


def reach_of(args: argparse.Namespace) -> Reach:
    """How the command reaches the engine, as its options and COCKPIT_LOCAL say."""
    return Reach.chosen(
        local=bool(getattr(args, "local", False)),
        via=getattr(args, "via", None),
        remote=getattr(args, "remote", None),
    )


def resolve_agent(args: argparse.Namespace) -> str | AgentSpec:
    """The agent a command line names. `--agent NAME` (or none: the default) is a name,
    which the engine that runs the agents looks up in its own `agents.toml` as it is then
    (the service's; with `--remote`, the far side's). `--agent-cmd "CMD ARGS"` is how it
    runs, with the settings of the entry of this side's `agents.toml` whose program it
    runs, and `--missing-file`. ValueError, saying why, when the command line is wrong."""
    if args.agent_cmd:
        return agent_command(args.agent_cmd, missing_file=args.missing_file)
    if args.missing_file is not None:
        raise ValueError(
            "--missing-file goes with --agent-cmd (set a registered agent's missing_file in"
            " agents.toml in Cockpit's config folder)"
        )
    return str(args.agent or DEFAULT_AGENT)
