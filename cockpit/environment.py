"""The user's world as the command that asks for an agent has it: its environment variables
and its umask.

The service outlives the commands that start it, so its own environment is a stale copy: a
key the user exported after it started would never reach an agent. Each client therefore
sends its own world once per connection (in the hello), the service keeps it in memory for
the sessions that connection starts, and an agent runs with the world of the request that
started it. Nothing here does I/O besides reading this process's own state; the values never
appear in a repr, so a log line or a traceback cannot show them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SERVICE_OWNED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
"""Variables a bundled agent takes from the service, never from the client: the agent runs
with the service's own interpreter, which a client's virtual environment would break."""

SERVICE_PREFIX = "COCKPIT_"
"""Cockpit's own variables (its data folder, the demo's settings) are the service's too, for
a bundled agent."""


@dataclass(frozen=True)
class Environment:
    """The variables and the umask of one command that may start agents."""

    variables: Mapping[str, str] = field(default_factory=dict)
    umask: int | None = None
    """The file mode mask the agent starts with (None: the service's own)."""

    def __repr__(self) -> str:
        mask = "unknown" if self.umask is None else f"{self.umask:03o}"
        return f"Environment({len(self.variables)} variables, umask {mask})"

    __str__ = __repr__

    def to_wire(self) -> dict[str, Any]:
        """As the hello carries it."""
        return {"variables": dict(self.variables), "umask": self.umask}

    @classmethod
    def from_wire(cls, data: object) -> Environment | None:
        """The environment a hello carries; None when it carries none or one that does not
        fit (only strings are kept: an environment holds nothing else)."""
        if not isinstance(data, Mapping):
            return None
        raw = data.get("variables")
        if not isinstance(raw, Mapping):
            return None
        variables = {
            key: value
            for key, value in raw.items()
            if isinstance(key, str) and isinstance(value, str) and key and "=" not in key
        }
        mask = data.get("umask")
        umask = mask if isinstance(mask, int) and not isinstance(mask, bool) else None
        return cls(variables, umask if umask is None or 0 <= umask <= 0o777 else None)


def current() -> Environment:
    """This process's world, now."""
    return Environment(dict(os.environ), current_umask())


def current_umask() -> int:
    """This process's umask. Read from /proc where it is there: setting the mask to read it
    would leave it wrong for a moment for every thread of the process."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def runs_our_python(command: tuple[str, ...]) -> bool:
    """True for an agent Cockpit runs with its own interpreter (a bundled one)."""
    return bool(command) and command[0] == sys.executable


def agent_variables(
    user: Mapping[str, str],
    entry: Mapping[str, str],
    service: Mapping[str, str],
    *,
    bundled: bool,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment an agent starts with: the user's, then for a bundled agent the
    service's own Python and Cockpit variables in place of the user's, then the agent
    entry's `env`, then `extra` (what Cockpit tells every agent)."""
    variables = dict(user)
    if bundled:
        for name in [name for name in variables if _service_owned(name)]:
            del variables[name]
        variables.update({name: value for name, value in service.items() if _service_owned(name)})
    variables.update(entry)
    variables.update(extra or {})
    return variables


def _service_owned(name: str) -> bool:
    return name in SERVICE_OWNED or name.startswith(SERVICE_PREFIX)
