"""Permission policies owned by Cockpit, applied to every agent alike.

For each tool kind a policy says `allow`, `ask` or `reject`. The global policy comes from
`policy.toml` in Cockpit's config folder, read when a decision is made (`policy_file`): an
edit counts from the next request on, a broken one is reported and the rules read before
stay, and with no good version ever read the defaults hold, which ask before any change.
A session may override any kind. A read or a
search is only allowed automatically when it names where it acts (its locations, or the
paths in its raw input) and every such place lies inside the session's root.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cockpit.config_file import ConfigError, ConfigFile, Parsed, error_line, key_line, where
from cockpit.inside_root import inside
from cockpit.policy_rule import ACTIONS, KINDS
from cockpit.text.textout import listed

DEFAULT_RULES: Mapping[str, str] = {
    "read": "allow",
    "search": "allow",
    "think": "allow",
    "edit": "ask",
    "delete": "ask",
    "move": "ask",
    "execute": "ask",
    "fetch": "ask",
    "switch_mode": "ask",
    "other": "ask",
}
"""Reads inside the root are allowed; anything that changes something, or leaves the
machine, is asked."""

POLICY_FILE = "policy.toml"


class PolicyError(ConfigError):
    """The policy file is not valid."""


@dataclass(frozen=True)
class Policy:
    """What to do for each tool kind."""

    rules: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))

    def action(self, kind: str) -> str:
        """The action for a kind (an unknown kind follows `other`)."""
        return self.rules.get(kind, self.rules.get("other", "ask"))

    def with_overrides(self, overrides: Mapping[str, str]) -> Policy:
        """This policy with a session's own rules on top."""
        return Policy({**self.rules, **{k: v for k, v in overrides.items() if v in ACTIONS}})


@dataclass(frozen=True)
class Decision:
    """A policy's verdict on one request: the action and why."""

    action: str
    reason: str


PATH_KEYS = frozenset(
    {
        "path",
        "paths",
        "filepath",
        "filepaths",
        "abspath",
        "absolutepath",
        "dirpath",
        "directory",
        "notebookpath",
        "cwd",
    }
)
"""The names (lower case, without `_` and `-`) under which agents put the paths a tool
acts on in its raw input: `path`, `file_path` (Claude Code), `absolute_path`, `dir_path`
(Gemini CLI), `filePath`, `paths`..."""


def _path_key(name: object) -> bool:
    return isinstance(name, str) and name.lower().replace("_", "").replace("-", "") in PATH_KEYS


def raw_paths(raw: object, depth: int = 3) -> list[str]:
    """The path-like values of a tool call's raw input: strings, or lists of strings,
    under a path key, also in nested tables (a few levels down)."""
    found: list[str] = []
    if depth <= 0 or not isinstance(raw, Mapping):
        return found
    for key, value in raw.items():
        if _path_key(key):
            values = value if isinstance(value, list) else [value]
            found.extend(v for v in values if isinstance(v, str) and v.strip())
        elif isinstance(value, Mapping):
            found.extend(raw_paths(value, depth - 1))
    return found


def named_paths(tool_call: Mapping[str, Any]) -> list[str]:
    """Every place a tool call says it acts on: its locations' paths and the paths in its
    raw input (an agent may send `locations: []` and name the file only there)."""
    paths = [
        location["path"]
        for location in listed(tool_call.get("locations"))
        if isinstance(location, Mapping) and isinstance(location.get("path"), str)
    ]
    return paths + raw_paths(tool_call.get("rawInput"))


COMMAND_KEYS = frozenset({"command", "cmd", "commands", "script", "code", "shell"})
"""Raw-input names under which a tool call carries something to run: a "read" that holds
one is no read Cockpit can check."""


def title_paths(title: str) -> list[str]:
    """The words of a title that name a place: `~`, or anything starting with `/`, `~/`,
    `./` or `../` (a "read" titled `rm -rf ~` names the home folder)."""
    words = (word.strip("\"'`,;:()[]{}") for word in title.split())
    return [w for w in words if w == "~" or w.startswith(("/", "~/", "./", "../"))]


def unchecked(tool_call: Mapping[str, Any], root: Path) -> str | None:
    """Why a read or a search cannot be allowed without asking, or None when every place
    it names (its locations, the paths in its raw input and in its title) lies inside
    `root` and it carries no command. The kind is only the agent's claim: this is what
    Cockpit can check of it."""
    named = named_paths(tool_call)
    if not named:
        return "with no location"
    raw = tool_call.get("rawInput")
    if isinstance(raw, Mapping) and any(_command_key(key) for key in raw):
        return "that carries a command"
    title = tool_call.get("title")
    places = named + title_paths(title if isinstance(title, str) else "")
    if not all(inside(path, root) for path in places):
        return "outside the session's folder"
    return None


def _command_key(name: object) -> bool:
    return isinstance(name, str) and name.lower() in COMMAND_KEYS


def decide(policy: Policy, tool_call: Mapping[str, Any], root: Path, scope: str) -> Decision:
    """What `policy` does with a permission request for `tool_call` in a session at `root`.

    `scope` says where the rule came from ("global" or "session"), for the decision row.
    """
    kind = str(tool_call.get("kind") or "other")
    action = policy.action(kind)
    if action == "allow" and kind in ("read", "search"):
        why = unchecked(tool_call, root)
        if why is not None:
            return Decision("ask", f"{kind} {why}")
    return Decision(action, f"{scope} policy: {kind} = {action}")


def session_rules(info: Mapping[str, Any] | None) -> dict[str, str]:
    """A session's own rules, from its stored info (what is not a valid rule is left out)."""
    rules = (info or {}).get("policy")
    if not isinstance(rules, Mapping):
        return {}
    return {k: v for k, v in rules.items() if k in KINDS and v in ACTIONS}


def rule_set(policy: Policy, kind: str, action: str | None) -> str:
    """What `/policy KIND [ACTION]` did, as the user is told."""
    if action is None:
        return f"This session: {kind} follows the global rule ({policy.action(kind)})"
    return f"This session: {kind} = {action}"


def describe_rules(policy: Policy, overrides: Mapping[str, str]) -> str:
    """The rules in force in a session, one line per action: the global policy with the
    session's own on top (marked), reads and searches allowed only inside the folder."""
    lines = []
    for action in ACTIONS:
        labels = []
        for kind in KINDS:
            if overrides.get(kind, policy.action(kind)) != action:
                continue
            where = " (in the folder)" if action == "allow" and kind in ("read", "search") else ""
            labels.append(kind + where + (" (this session)" if kind in overrides else ""))
        lines.append(f"{action}: {', '.join(labels) or 'nothing'}")
    return "\n".join([*lines, f"Unmarked rules are global ({POLICY_FILE})."])


def parse_policy(text: str, origin: str) -> Policy:
    """A policy from TOML: a `[permissions]` table of kind = "allow" | "ask" | "reject".
    PolicyError, naming the file and line, when it is not one."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"{origin}:{error_line(error, text)}: not valid TOML: {error}") from None
    table = document.get("permissions", {})
    if not isinstance(table, dict):
        raise PolicyError(f"{origin}: [permissions] must be a table of kind = action")
    rules = dict(DEFAULT_RULES)
    for kind, action in table.items():
        at = where(origin, key_line(text, kind))
        if kind not in KINDS:
            raise PolicyError(f"{at}: unknown tool kind {kind!r} (known: {', '.join(KINDS)})")
        if action not in ACTIONS:
            raise PolicyError(f"{at}: {kind} = {action!r}; use one of {', '.join(ACTIONS)}")
        rules[kind] = action
    return Policy(rules)


def policy_file(config: Path) -> ConfigFile[Policy]:
    """The global policy in `config/policy.toml`, read when it is used; the defaults when
    there is no file, or no good version of it was ever read."""
    return ConfigFile(
        config / POLICY_FILE,
        lambda text, origin, _last: Parsed(parse_policy(text, origin)),
        Policy(),
        kept="the rules read before stay in force",
        defaults="the default rules apply: anything that changes something is asked",
    )


def load_policy(config: Path) -> tuple[Policy, str | None]:
    """The global policy from `config/policy.toml` as it is now (defaults when missing),
    and a problem message when the file is broken (the defaults are used then)."""
    policy, problems = policy_file(config).read()
    return policy, problems[0] if problems else None
