"""The registry of known agents: bundled definitions plus the user's additions and overrides.

Bundled entries live in `acp/agents.toml`; the user's in `agents.toml` in Cockpit's
config folder, same format. A user entry with a bundled name overrides the fields it
sets. The user's file is read when it is used (`AgentsFile`): an agent added while the
service runs is known at once. A broken edit is reported (file and line) and what was
read before stays: the whole file's entries when it is no TOML, an entry's own when only
that entry is wrong. The bundled agents always load. Commands are argv lists, never run
through a shell.
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

from cockpit.api import MISSING_FILE_POLICIES, AgentSpec
from cockpit.config_file import ConfigError, ConfigFile, Parsed, error_line
from cockpit.engine.priority import MAX_NICE
from cockpit.paths import agents_dir, config_dir

FIELDS = frozenset(
    {"title", "command", "env", "description", "install", "missing_file", "nice", "terminal_env"}
)


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


def _table(text: str, origin: str) -> dict[str, Any]:
    """The `[agents]` table of an agents file (ConfigError when the file is no TOML, or
    the table is something else)."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{origin}:{error_line(error, text)}: not valid TOML: {error}") from None
    table = document.get("agents", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: 'agents' must be a table of [agents.NAME] entries")
    return table


def _entries(
    text: str,
    origin: str,
    base: Mapping[str, AgentSpec],
    last: Mapping[str, AgentSpec],
) -> tuple[dict[str, AgentSpec], list[str]]:
    """The entries of an agents file (merged over `base`), and the problems found. An
    entry that cannot be used is left out, unless `last` (what the file said before) has
    one of that name: that one stays."""
    agents: dict[str, AgentSpec] = {}
    problems: list[str] = []
    for name, raw in _table(text, origin).items():
        spec, found = _entry(name, raw, base.get(name), origin, text)
        if spec is None and name in last:
            spec = last[name]
            found = [*found[:-1], f"{found[-1]}; the entry read before stays in force"]
        problems += found
        if spec is not None:
            agents[name] = spec
    return agents, problems


def parse_agents(
    text: str, origin: str, base: Mapping[str, AgentSpec] | None = None
) -> tuple[dict[str, AgentSpec], list[str]]:
    """Parse one agents file. Returns the entries it defines (merged over `base`) and the
    problems found, each naming the file and line."""
    try:
        return _entries(text, origin, base or {}, {})
    except ConfigError as error:
        return {}, [str(error)]


USER_FILE = "agents.toml"


class AgentsFile:
    """The registry as the user's `agents.toml` says now: the bundled agents, with the
    user's entries read again whenever the file changed (one `stat` per use otherwise)."""

    def __init__(self, user_dir: Path | None = None) -> None:
        bundled_path = agents_dir() / "agents.toml"
        self._bundled, self._bundled_problems = parse_agents(
            bundled_path.read_text(encoding="utf-8"), "bundled agents.toml"
        )
        none: dict[str, AgentSpec] = {}
        self._file = ConfigFile(
            (user_dir or config_dir()) / USER_FILE,
            self._parse,
            none,
            kept="the agents read before stay as they were",
            defaults="only the bundled agents are available",
        )

    def _parse(
        self, text: str, origin: str, last: dict[str, AgentSpec]
    ) -> Parsed[dict[str, AgentSpec]]:
        agents, problems = _entries(text, origin, self._bundled, last)
        return Parsed(agents, tuple(problems))

    def read(self) -> tuple[Registry, tuple[str, ...]]:
        """The registry now, and the problems of a version of the file first seen now."""
        user, new = self._file.read()
        return Registry({**self._bundled, **user}, list(self.problems)), new

    @property
    def problems(self) -> tuple[str, ...]:
        """What is wrong with the agents files as last seen."""
        return (*self._bundled_problems, *self._file.problems)


def load_registry(user_dir: Path | None = None) -> Registry:
    """The bundled agents, with the user's `agents.toml` applied over them, as they are
    now (`cockpit agents`, tests)."""
    registry, _ = AgentsFile(user_dir).read()
    return registry


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
