"""Which of the user's MCP servers an agent is handed as it opens its session, and why the
others are left out. Pure: the agent's name, what it advertises (`mcpCapabilities`) and the
environment it starts with come in; the SDK's server records and the reasons go out.

Every agent takes stdio servers; http and SSE only one that says so (codex-acp says
`sse: false`). A `${NAME}` in a value is read from the environment the agent starts with
(the client's, in the service), at each start: a server whose variable is not set there
is left out, saying which.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from cockpit.api import McpServerState
from cockpit.engine.mcp.config import McpEntry

Handed = McpServerStdio | HttpMcpServer | SseMcpServer

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class Handing:
    """The servers an agent is handed, and those left out with why (in words)."""

    servers: list[Handed] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)


def hand(
    entries: tuple[McpEntry, ...],
    agent: str,
    capabilities: Mapping[str, object],
    variables: Mapping[str, str],
) -> Handing:
    """What `agent`, advertising `capabilities` (its `mcpCapabilities`), is handed of
    `entries`, its `${NAME}`s read from `variables`."""
    handing = Handing()
    for entry in entries:
        if entry.agents is not None and agent not in entry.agents:
            continue  # meant for other agents: not left out, not this agent's at all
        if entry.transport != "stdio" and not capabilities.get(entry.transport):
            kind = "HTTP" if entry.transport == "http" else "SSE"
            handing.left_out.append((entry.name, f"this agent takes no {kind} servers"))
            continue
        missing = sorted(set(named_variables(entry)) - set(variables))
        if missing:
            names = ", ".join(missing)
            handing.left_out.append((entry.name, f"{names} is not set where the agent starts"))
            continue
        handing.servers.append(_server(entry, variables))
    return handing


def handing_note(handing: Handing, whose: str = "Your") -> str | None:
    """What the session says of `whose` servers (the user's, or "The repository's") as
    the agent opens it (None: there were none for it). Names only: never a value."""
    if not handing.servers and not handing.left_out:
        return None
    parts = []
    if handing.servers:
        names = ", ".join(server.name for server in handing.servers)
        parts.append(f"{whose} MCP servers handed to the agent: {names}.")
    if handing.left_out:
        reasons = "; ".join(f"{name} ({why})" for name, why in handing.left_out)
        said = "Left out" if handing.servers else f"{whose} MCP servers left out"
        parts.append(f"{said}: {reasons}.")
    return " ".join(parts)


def handing_states(entries: tuple[McpEntry, ...], handing: Handing) -> list[McpServerState]:
    """Each server `handing` handed or left out, as the contract says it."""
    transports = {entry.name: entry.transport for entry in entries}
    return [
        *(McpServerState(s.name, transports.get(s.name, "stdio"), True) for s in handing.servers),
        *(McpServerState(name, transports.get(name, "stdio"), False, why)
          for name, why in handing.left_out),
    ]  # fmt: skip


def named_variables(entry: McpEntry) -> list[str]:
    """The variables the values of `entry` name."""
    return [name for _, value in (*entry.env, *entry.headers) for name in _REFERENCE.findall(value)]


def _filled(value: str, variables: Mapping[str, str]) -> str:
    return _REFERENCE.sub(lambda match: variables[match.group(1)], value)


def _server(entry: McpEntry, variables: Mapping[str, str]) -> Handed:
    if entry.transport == "stdio":
        env = [EnvVariable(name=k, value=_filled(v, variables)) for k, v in entry.env]
        return McpServerStdio(
            name=entry.name, command=entry.command, args=list(entry.args), env=env
        )
    headers = [HttpHeader(name=k, value=_filled(v, variables)) for k, v in entry.headers]
    if entry.transport == "http":
        return HttpMcpServer(name=entry.name, url=entry.url, headers=headers, type="http")
    return SseMcpServer(name=entry.name, url=entry.url, headers=headers, type="sse")
