"""The free ports a worktree session gets, so that dev servers started in parallel
sessions do not fight over one: `COCKPIT_PORT` (the first) and `COCKPIT_PORTS` (all, by
commas) in the world of its agent, its terminals and its `!commands`."""

from __future__ import annotations

import dataclasses
import random
import socket
from collections.abc import Callable, Collection, Mapping

from cockpit.environment import Environment

LOW, HIGH = 20000, 30000
"""Where ports are picked: above the usual dev servers' own, below the system's
ephemeral range (from 32768 on Linux), so a connection's own port rarely takes one."""
TRIES = 200


def port_free(port: int) -> bool:
    """True when nothing listens on `port` of this machine now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def pick_ports(
    count: int,
    taken: Collection[int],
    rng: random.Random | None = None,
    free: Callable[[int], bool] = port_free,
) -> tuple[int, ...]:
    """`count` ports in [LOW, HIGH), none in `taken` (other sessions'), each free now;
    fewer when that many cannot be found."""
    rng = rng or random.Random()
    chosen: list[int] = []
    for _ in range(TRIES):
        if len(chosen) >= count:
            break
        port = rng.randrange(LOW, HIGH)
        if port not in taken and port not in chosen and free(port):
            chosen.append(port)
    return tuple(chosen)


def port_variables(ports: tuple[int, ...]) -> Mapping[str, str]:
    """The variables that tell a session's processes their ports (none: no variables)."""
    if not ports:
        return {}
    return {"COCKPIT_PORT": str(ports[0]), "COCKPIT_PORTS": ",".join(map(str, ports))}


def with_ports(world: Environment | None, ports: tuple[int, ...]) -> Environment | None:
    """`world` with the session's port variables added (None stays None)."""
    if world is None or not ports:
        return world
    return dataclasses.replace(world, variables={**world.variables, **port_variables(ports)})
