"""`mcp.toml`: the MCP servers the user hands to every session, or to named agents only.

    [servers.github]
    command = "github-mcp-server"
    args = ["stdio"]
    env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }

    [servers.docs]
    url = "https://docs.example.com/mcp"      # http; `transport = "sse"` for SSE
    headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
    agents = ["claude", "gemini"]             # only these agents get it

A value may name a variable of the environment the agent starts with (`${NAME}`): the
secret stays in the user's environment, never in a file Cockpit writes. Pure: parsing
only, read when used by `mcp_file`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cockpit.config_file import ConfigError, ConfigFile, Parsed, error_line, where

MCP_FILE = "mcp.toml"
TRANSPORTS = ("stdio", "http", "sse")
FIELDS = frozenset({"command", "args", "env", "url", "transport", "headers", "agents"})
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class McpEntry:
    """One server of `mcp.toml`, as written (its `${NAME}`s not read yet)."""

    name: str
    transport: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    agents: tuple[str, ...] | None = None
    """The agents it is handed to (by their name in `agents.toml`); None: every one."""


def parse_mcp(text: str, origin: str) -> Parsed[tuple[McpEntry, ...]]:
    """The servers of an `mcp.toml`; ConfigError naming the file and line when a server
    cannot be read (an unknown field is a warning, and left out)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{origin}:{error_line(error, text)}: not valid TOML: {error}") from None
    return read_servers(document.get("servers", {}), text, origin)


def read_servers(
    servers: object, text: str, origin: str, table: str = "servers"
) -> Parsed[tuple[McpEntry, ...]]:
    """The servers of `servers` (the `table` of the file `origin`, whose `text` gives
    the lines): a repository's `.cockpit.toml` holds them under `[mcp.servers.NAME]`."""
    if not isinstance(servers, dict):
        raise ConfigError(f"{origin}: `{table}` must be tables: [{table}.NAME]")
    entries: list[McpEntry] = []
    warnings: list[str] = []
    for name, fields in servers.items():
        at = where(origin, _table_line(text, table, name))
        if not NAME.match(name):
            raise ConfigError(f"{at}: a server's name is letters, digits, `.`, `-` or `_`")
        if not isinstance(fields, dict):
            raise ConfigError(f"{at}: [{table}.{name}] must be a table")
        unknown = sorted(set(fields) - FIELDS)
        if unknown:
            warnings.append(f"{at}: [{table}.{name}] has unknown fields, left out: {unknown}")
        entries.append(_entry(name, fields, at, f"[{table}.{name}]"))
    return Parsed(tuple(entries), tuple(warnings))


def mcp_file(config: Path) -> ConfigFile[tuple[McpEntry, ...]]:
    """The user's `mcp.toml`, read when a session opens; none: no server is handed."""
    return ConfigFile(
        config / MCP_FILE,
        lambda text, origin, _last: parse_mcp(text, origin),
        (),
        kept="the servers read before are still handed",
        defaults="no server of yours is handed",
    )


def _entry(name: str, table: dict[str, Any], at: str, label: str) -> McpEntry:
    url, command = table.get("url"), table.get("command")
    transport = table.get("transport", "http" if url is not None else "stdio")
    if transport not in TRANSPORTS:
        raise ConfigError(f"{at}: {label} transport must be one of {TRANSPORTS}")
    agents = table.get("agents")
    if agents is not None and not _strings(agents):
        raise ConfigError(f"{at}: {label} agents must be a list of agent names")
    chosen = tuple(agents) if agents is not None else None
    if transport == "stdio":
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{at}: {label} needs a `command` (or a `url`)")
        args = table.get("args", [])
        if not _strings(args):
            raise ConfigError(f"{at}: {label} args must be a list of strings")
        env = _pairs(table.get("env", {}), f"{at}: {label} env")
        return McpEntry(name, transport, command, tuple(args), env, agents=chosen)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{at}: {label} needs an http(s) `url`")
    headers = _pairs(table.get("headers", {}), f"{at}: {label} headers")
    return McpEntry(name, transport, url=url, headers=headers, agents=chosen)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _pairs(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{what} must be a table of text values")
    return tuple((str(key), str(item)) for key, item in value.items())


def _table_line(text: str, table: str, name: str) -> int | None:
    """The line of `[table.name]` in `text` (the name may be quoted)."""
    parts = [*(re.escape(part) for part in table.split(".")), rf"[\"']?{re.escape(name)}[\"']?"]
    dotted = r"[ \t]*\.[ \t]*".join(parts)
    match = re.compile(rf"^[ \t]*\[[ \t]*{dotted}[ \t]*\]", re.M).search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None
