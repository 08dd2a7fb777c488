"""A repository's own MCP servers (`[mcp.servers.NAME]` in its committed `.cockpit.toml`).
A repository is someone else's code: a server of its runs only once the user approved
its whole text for that repository (a changed field asks again), and it may not name
the user's environment variables, which would hand their secrets to the repository's
choice of program. Pure: the approvals come in as a question.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping

from cockpit.api import McpServerState
from cockpit.engine.mcp.config import McpEntry
from cockpit.engine.mcp.handing import Handing, hand, named_variables

NOT_APPROVED = "not approved yet: `/mcp approve`, or `cockpit approve` in the repository"


def server_text(entry: McpEntry) -> str:
    """All of `entry` as the user reads it before approving, and as the approval keeps it.
    Each value is written as JSON after a fixed word, so two servers that differ in any
    value never read the same (an approval of one is never one of the other), and a
    control character shows as its escape."""
    fields: list[tuple[str, object]] = (
        [("command", entry.command), ("args", list(entry.args)), ("env", dict(entry.env))]
        if entry.transport == "stdio"
        else [(entry.transport, entry.url), ("headers", dict(entry.headers))]
    )
    said = [
        f"{word} {json.dumps(value, ensure_ascii=False)}"
        for at, (word, value) in enumerate(fields)
        if value or at == 0  # the command or URL always: it says the transport
    ]
    if entry.agents is not None:  # even none: an empty list hands it to no agent
        said.append(f"agents {json.dumps(list(entry.agents), ensure_ascii=False)}")
    return f"{entry.name}: {' '.join(said)}"


def approvable(entries: tuple[McpEntry, ...]) -> tuple[list[str], list[str]]:
    """The texts of the servers of `entries` that approving would let run, and why each
    of the others never will."""
    texts: list[str] = []
    refused: list[str] = []
    for entry in entries:
        if why := _never(entry):
            refused.append(f"the MCP server {entry.name} is never handed: {why}")
        else:
            texts.append(server_text(entry))
    return texts, refused


def _never(entry: McpEntry) -> str:
    """Why a repository's `entry` is never handed, whatever the user approves."""
    names = named_variables(entry)
    if not names:
        return ""
    listed = ", ".join(f"${{{name}}}" for name in names)
    return f"a repository's server may not name your environment variables ({listed})"


def hand_repository(
    entries: tuple[McpEntry, ...],
    agent: str,
    capabilities: Mapping[str, object],
    repository: str,
    approved: Callable[[str], bool],
    taken: Collection[str],
) -> tuple[Handing, list[McpServerState]]:
    """What `agent` is handed of the `entries` of `repository` (its checkout's top), and
    each as the contract says it (one left out for want of approval carries the text to
    approve). `taken`: the names handed already (the plan tool's, the user's), which win."""
    handing = Handing()
    states: list[McpServerState] = []
    allowed: list[McpEntry] = []
    for entry in entries:
        if entry.agents is not None and agent not in entry.agents:
            continue
        why, approval, text = "", "", server_text(entry)
        if entry.name in taken:
            why = "one of your servers, or Cockpit's, has this name"
        elif never := _never(entry):
            why = never
        elif not approved(text):
            why, approval = NOT_APPROVED, text
        if why:
            handing.left_out.append((entry.name, why))
            states.append(
                McpServerState(entry.name, entry.transport, False, why, repository, approval)
            )
        else:
            allowed.append(entry)
    handed = hand(tuple(allowed), agent, capabilities, {})
    handing.servers += handed.servers
    handing.left_out += handed.left_out
    kinds = {entry.name: entry.transport for entry in allowed}
    states += [McpServerState(s.name, kinds[s.name], True, "", repository) for s in handed.servers]
    states += [
        McpServerState(name, kinds[name], False, why, repository) for name, why in handed.left_out
    ]
    return handing, states
