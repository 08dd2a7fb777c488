"""The registry of known agents: bundled definitions plus the user's additions and overrides.

Bundled entries live in `acp/agents.toml`; the user's in `agents.toml` in Cockpit's
config folder, same format. A user entry with a bundled name overrides the fields it
sets. A broken user file is reported (file and line) and ignored; the bundled agents
always load. Commands are argv lists, never run through a shell.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cockpit.api import AgentSpec
from cockpit.engine.priority import MAX_NICE
from cockpit.paths import agents_dir, config_dir

FIELDS = frozenset(
    {"title", "command", "env", "description", "install", "missing_file", "nice", "terminal_env"}
)
MISSING_FILE_POLICIES = frozenset({"error", "empty"})


def executable(spec: AgentSpec) -> str | None:
    """The agent's resolved program, or None when it is not installed here."""
    program = spec.command[0]
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
    if "terminal_env" in raw:
        names = raw["terminal_env"]
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            return None, [
                *problems,
                f"{where}: agent {name!r}: terminal_env must be a list of variable names",
            ]
        values["terminal_env"] = tuple(names)
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


SETTINGS = {"missing_file": MISSING_FILE_POLICIES}
"""The settings a command line may give an agent, with the values each takes."""

_LAUNCHER = re.compile(r"(python|pypy)[0-9.]*|node|nodejs|env", re.IGNORECASE)
"""Programs that run another one: an interpreter running a script, or `env`."""


def program_index(argv: Sequence[str]) -> int:
    """Where the agent's program is in `argv`: the first word, unless that is an
    interpreter or `env`; then the first word after it that is neither an option nor a
    variable assignment (`python3 -u agent.py`, `env A=1 gemini --acp`)."""
    if not _LAUNCHER.fullmatch(Path(argv[0]).name):
        return 0
    for index, word in enumerate(argv[1:], start=1):
        if not word.startswith("-") and "=" not in word:
            return index
    return 0


def _shared_arguments(a: Sequence[str], b: Sequence[str]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        count += 1
    return count


def matching_entry(
    argv: Sequence[str],
    agents: Mapping[str, AgentSpec],
    resolve: Callable[[str], str | None] = lambda word: None,
) -> AgentSpec | None:
    """The registered agent whose program a command runs, or None.

    A program named directly matches an entry's by file name (`/opt/bin/gemini` is
    `gemini`) or, through `resolve`, by the file both resolve to; a script run by an
    interpreter only by that file (file names like `index.js` say little). Among several
    entries, the one whose arguments the command's begin with most, then the first one
    registered."""
    at = program_index(argv)
    word = argv[at]
    place = resolve(word)
    best: AgentSpec | None = None
    best_shared = -1
    for spec in agents.values():
        theirs = program_index(spec.command)
        if (at == 0) != (theirs == 0):
            continue
        other = spec.command[theirs]
        same_name = at == 0 and Path(word).name == Path(other).name
        if not same_name and (place is None or place != resolve(other)):
            continue
        shared = _shared_arguments(argv[at + 1 :], spec.command[theirs + 1 :])
        if shared > best_shared:
            best, best_shared = spec, shared
    return best


def resolve_program(word: str) -> str | None:
    """The file a program word runs (found on PATH when it names no folder, symbolic links
    followed), or None when there is none."""
    found = word if "/" in word else shutil.which(word)
    if found is None or not os.path.isfile(found):
        return None
    return os.path.realpath(found)


def with_overrides(spec: AgentSpec, settings: Mapping[str, object]) -> AgentSpec:
    """`spec` with the settings given for it applied (as a session stored them: an unknown
    setting or value, from another version of Cockpit, is left out)."""
    valid = {
        name: value
        for name, value in settings.items()
        if isinstance(value, str) and value in SETTINGS.get(name, ())
    }
    if not valid:
        return spec
    return replace(
        spec,
        missing_file=valid.get("missing_file", spec.missing_file),
        overrides={**spec.overrides, **valid},
    )


def agent_from_command(
    command: str | Sequence[str],
    agents: Mapping[str, AgentSpec] | None = None,
    *,
    missing_file: str | None = None,
    resolve: Callable[[str], str | None] = resolve_program,
) -> AgentSpec:
    """An agent given as a command ("CMD ARGS", split like a shell and never run by one).

    A command that runs a registered agent's program takes that entry's settings (its
    quirks, environment, priority, title) with its own arguments; exactly the entry's
    command is that entry. Other commands get the defaults. `missing_file` sets how a read
    of a missing file is answered, over the entry's. The name of a command that is not an
    entry's is the command itself, so that it never takes a registered name."""
    argv = tuple(shlex.split(command) if isinstance(command, str) else command)
    if not argv:
        raise ValueError("the agent command is empty")
    if missing_file is not None and missing_file not in MISSING_FILE_POLICIES:
        raise ValueError(f"missing_file must be 'error' or 'empty', not {missing_file!r}")
    given = {"missing_file": missing_file} if missing_file is not None else {}
    entry = matching_entry(argv, agents or {}, resolve)
    if entry is not None and entry.command == argv and not given:
        return entry
    typed = shlex.join(argv)
    if entry is None:
        spec = AgentSpec(name=typed, command=argv, title=typed, source="command line")
    else:
        spec = replace(
            entry,
            name=typed,
            command=argv,
            title=f"{entry.label}: {typed}",
            source="command line",
        )
    return with_overrides(spec, given)
