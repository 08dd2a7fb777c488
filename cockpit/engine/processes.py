"""Ending process groups: agents and terminals run in their own group, so a stop reaches
their grandchildren too, and every child is reaped (no zombies)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group led by `pid`, ignoring one that is already gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def end_group(process: asyncio.subprocess.Process, grace: float = GRACE) -> int:
    """SIGTERM the process's group, SIGKILL it after `grace` seconds, reap it; return its code.

    The group is signalled even when the leader already exited, so children it left
    behind (a launcher's native child, a shell's pipeline) go too.
    """
    signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), grace)
    signal_group(process.pid, signal.SIGKILL)
    return await process.wait()


def describe_exit(code: int | None) -> str:
    """A returncode in words: "code 3" or "signal SIGKILL"."""
    if code is None:
        return "an unknown status"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"code {code}"
