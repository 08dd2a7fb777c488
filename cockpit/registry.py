"""The registry of known agents: bundled definitions plus the user's additions and overrides.

Bundled entries live in `acp/agents.toml`; the user's in `agents.toml` in Cockpit's
config folder, same format. A user entry with a bundled name overrides the fields it
sets. A broken user file is reported (file and line) and ignored; the bundled agents
always load. Commands are argv lists, never run through a shell.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cockpit.bundled import agents_dir
from cockpit.paths import config_dir
from cockpit.priority import AGENT_NICE, MAX_NICE

DEFAULT_AGENT = "demo"
FIELDS = frozenset({"title", "command", "env", "description", "install", "missing_file", "nice"})
MISSING_FILE_POLICIES = frozenset({"error", "empty"})


@dataclass(frozen=True)
class AgentSpec:
    """How to run one agent."""

    name: str
    command: tuple[str, ...]
    title: str = ""
    env: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    install: str = ""
    missing_file: str = "error"
    """How a read of a missing file inside the root is answered: the JSON-RPC "resource
    not found" error, or (for agents that read before they create) empty content."""
    nice: int = AGENT_NICE
    """How many steps below Cockpit's own CPU priority the agent and the commands it runs
    through Cockpit work (0 to 19; 0 keeps Cockpit's)."""
    source: str = "bundled"

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title or self.name

    def executable(self) -> str | None:
        """The resolved program, or None when it is not installed."""
        program = self.command[0]
        if "/" in program:
            return program if Path(program).is_file() else None
        return shutil.which(program)


@dataclass
class Registry:
    """Agents by name, and the problems met while loading them."""

    agents: dict[str, AgentSpec]
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentSpec:
        """The agent called `name`; a KeyError that lists the known names otherwise."""
        try:
            return self.agents[name]
        except KeyError:
            known = ", ".join(sorted(self.agents))
            raise KeyError(f"no agent called {name!r}; known agents: {known}") from None


def expand(argv: list[str]) -> tuple[str, ...]:
    """Fill in `{python}` (this interpreter) and `{agents}` (the bundled agents folder)."""
    values = {"python": sys.executable, "agents": str(agents_dir())}
    return tuple(part.format_map(values) if "{" in part else part for part in argv)


def _header_line(text: str, name: str) -> int | None:
    quoted = rf"[\"']?{re.escape(name)}[\"']?"
    pattern = re.compile(rf"^[ \t]*\[[ \t]*agents[ \t]*\.[ \t]*{quoted}[ \t]*\]", re.M)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _where(origin: str, text: str, name: str) -> str:
    line = _header_line(text, name)
    return f"{origin}:{line}" if line else origin


def _entry(
    name: str, raw: Any, base: AgentSpec | None, origin: str, text: str
) -> tuple[AgentSpec | None, list[str]]:
    where = _where(origin, text, name)
    if not isinstance(raw, dict):
        return None, [f"{where}: agent {name!r} must be a table"]
    problems = [
        f"{where}: agent {name!r}: unknown field {key!r}" for key in raw if key not in FIELDS
    ]
    values: dict[str, Any] = {}
    command = raw.get("command")
    if command is not None:
        if isinstance(command, str):
            command = shlex.split(command)
        if not (isinstance(command, list) and command and all(isinstance(p, str) for p in command)):
            return None, [
                *problems,
                f"{where}: agent {name!r}: command must be a non-empty list of strings",
            ]
        values["command"] = expand(command)
    elif base is None:
        return None, [*problems, f"{where}: agent {name!r}: command is missing"]
    env = raw.get("env")
    if env is not None:
        if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
            return None, [*problems, f"{where}: agent {name!r}: env must be a table of strings"]
        values["env"] = {**(base.env if base else {}), **env}
    for key in ("title", "description", "install"):
        if key in raw:
            if not isinstance(raw[key], str):
                return None, [*problems, f"{where}: agent {name!r}: {key} must be a string"]
            values[key] = raw[key]
    if "missing_file" in raw:
        if raw["missing_file"] not in MISSING_FILE_POLICIES:
            return None, [
                *problems,
                f"{where}: agent {name!r}: missing_file must be 'error' or 'empty'",
            ]
        values["missing_file"] = raw["missing_file"]
    if "nice" in raw:
        nice = raw["nice"]
        if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= MAX_NICE:
            return None, [
                *problems,
                f"{where}: agent {name!r}: nice must be a whole number from 0 to {MAX_NICE}",
            ]
        values["nice"] = nice
    if base is not None:
        return replace(base, source=origin, **values), problems
    return AgentSpec(name=name, source=origin, **values), problems


def parse_agents(
    text: str, origin: str, base: Mapping[str, AgentSpec] | None = None
) -> tuple[dict[str, AgentSpec], list[str]]:
    """Parse one agents file. Returns the entries it defines (merged over `base`) and the
    problems found, each naming the file and line."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"at line (\d+)", str(error))
        line = int(match.group(1)) if match else len(text.splitlines()) or 1  # "at end of document"
        where = f"{origin}:{line}"
        return {}, [f"{where}: not valid TOML: {error}"]
    table = document.get("agents", {})
    if not isinstance(table, dict):
        return {}, [f"{origin}: 'agents' must be a table of [agents.NAME] entries"]
    agents: dict[str, AgentSpec] = {}
    problems: list[str] = []
    for name, raw in table.items():
        spec, found = _entry(name, raw, (base or {}).get(name), origin, text)
        problems += found
        if spec is not None:
            agents[name] = spec
    return agents, problems


def load_registry(user_dir: Path | None = None) -> Registry:
    """The bundled agents, with the user's `agents.toml` applied over them."""
    bundled_path = agents_dir() / "agents.toml"
    agents, problems = parse_agents(bundled_path.read_text(encoding="utf-8"), "bundled agents.toml")
    user_path = (user_dir or config_dir()) / "agents.toml"
    if user_path.is_file():
        try:
            text = user_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{user_path}: cannot be read: {error}")
        else:
            user_agents, user_problems = parse_agents(text, str(user_path), agents)
            agents.update(user_agents)
            problems += user_problems
    return Registry(agents, problems)


def agent_from_command(command: str) -> AgentSpec:
    """An agent given on the command line as "CMD ARGS" (split like a shell, never run by one)."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the agent command is empty")
    return AgentSpec(
        name=Path(argv[0]).name,
        command=tuple(argv),
        title=command,
        source="command line",
    )
