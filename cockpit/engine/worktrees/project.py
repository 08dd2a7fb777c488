"""What a repository asks of its worktree sessions: a committed `.cockpit.toml`, read
from the user's checkout at the session's base (never from the worktree the agent writes).

    copy = [".env", "config/local.json"]   # files of the checkout copied in, never staged
    setup = "npm install"                  # run in each new worktree, once approved
    test = "npm test"                      # how to test the work, once approved
    ports = 3                              # free ports for the session's servers

    [mcp.servers.docs]                     # MCP servers for its sessions, once approved
    command = "npx"
    args = ["docs-mcp"]

A value that is wrong is left out and said; the rest holds."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from cockpit.config_file import ConfigError
from cockpit.engine.mcp.config import McpEntry, read_servers

PROJECT_FILE = ".cockpit.toml"
"""The file, at the top of the repository."""
DEFAULT_PORTS = 3
"""Free ports a worktree session gets when the file does not say."""
MAX_PORTS = 10
"""The most a file may ask for."""


@dataclass(frozen=True)
class ProjectConfig:
    """What `.cockpit.toml` asks for; `problems` says what was left out and why."""

    copy: tuple[str, ...] = ()
    setup: str | None = None
    test: str | None = None
    ports: int = DEFAULT_PORTS
    problems: tuple[str, ...] = ()
    mcp: tuple[McpEntry, ...] = ()
    """The MCP servers it asks its sessions' agents be handed (`[mcp.servers.NAME]`)."""


def copy_problem(path: str) -> str | None:
    """Why `path` cannot be copied in (None: it can). Only a relative path inside the
    repository, without `..` or git's own folder, names a file of the checkout."""
    if not path.strip() or "\0" in path or "\\" in path:
        return f"{path!r} is not a path inside the repository"
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~"):
        return f"{path!r} is not inside the repository: only relative paths are copied in"
    if ".." in pure.parts:
        return f"{path!r} leaves the repository: `..` is not copied in"
    if not pure.parts:
        return f"{path!r} is the repository itself, not a file in it"
    if pure.parts[0] == ".git":
        return f"{path!r} is git's own, not a file to copy in"
    return None


def parse_project(text: str) -> ProjectConfig:
    """The configuration `text` (the file's content) holds."""
    try:
        values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return ProjectConfig(problems=(f"{PROJECT_FILE} is not valid TOML: {error}",))
    problems: list[str] = []
    copy = _copy_list(values.get("copy", []), problems)
    setup = _command(values, "setup", problems)
    test = _command(values, "test", problems)
    ports = values.get("ports", DEFAULT_PORTS)
    if not isinstance(ports, int) or isinstance(ports, bool) or not 0 <= ports <= MAX_PORTS:
        problems.append(f"`ports` must be a number from 0 to {MAX_PORTS}")
        ports = DEFAULT_PORTS
    mcp = _servers(values.get("mcp", {}), text, problems)
    known = {"copy", "setup", "test", "ports", "mcp"}
    problems += [f"`{name}` is not a setting Cockpit knows" for name in values if name not in known]
    return ProjectConfig(tuple(copy), setup, test, ports, tuple(problems), mcp)


def _servers(value: Any, text: str, problems: list[str]) -> tuple[McpEntry, ...]:
    """The MCP servers of the `[mcp]` table; none when they cannot be read (said)."""
    if not isinstance(value, dict):
        problems.append("`mcp` must be a table: [mcp.servers.NAME]")
        return ()
    problems += [
        f"`mcp.{name}` is not a setting Cockpit knows" for name in value if name != "servers"
    ]
    try:
        parsed = read_servers(value.get("servers", {}), text, PROJECT_FILE, "mcp.servers")
    except ConfigError as error:
        problems.append(f"no MCP server is read: {error}")
        return ()
    problems += parsed.warnings
    return parsed.value


def _copy_list(value: Any, problems: list[str]) -> list[str]:
    if not isinstance(value, list):
        problems.append("`copy` must be a list of paths")
        return []
    paths: list[str] = []
    for item in value:
        problem = copy_problem(item) if isinstance(item, str) else f"{item!r} is not a path"
        if problem is not None:
            problems.append(f"not copied in: {problem}")
        elif str(PurePosixPath(item)) not in paths:
            paths.append(str(PurePosixPath(item)))
    return paths


def _command(values: dict[str, Any], name: str, problems: list[str]) -> str | None:
    value = values.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        problems.append(f"`{name}` must be a command, as text")
        return None
    return value.strip()


def keep_out(copied: tuple[str, ...]) -> list[str]:
    """The pathspecs that stage everything but the files copied in (after `--`)."""
    return [".", *(f":(exclude,top,literal){path}" for path in copied)] if copied else ["."]


def clean_spared(copied: tuple[str, ...]) -> list[str]:
    """`git clean` arguments that leave the files copied in where they are: each as an
    anchored pattern, its special characters taken literally."""
    arguments: list[str] = []
    for path in copied:
        literal = "".join(f"\\{c}" if c in "\\*?[]!# " else c for c in path)
        arguments += ["-e", f"/{literal}"]
    return arguments
