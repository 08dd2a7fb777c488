"""Ending process groups: agents and terminals run in their own group, so a stop reaches
their grandchildren too, and every child is reaped (no zombies)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from cockpit.engine.group_cpu import stat_fields

GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL."""
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
"""What tells one boot of the machine from the next (Linux)."""
STARTED_FIELD = 19
"""Where a process's start time (proc(5)'s field 22) is in `stat_fields`."""


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


def group_mark(pid: int) -> dict[str, int | str] | None:
    """What tells the group `pid` leads from a later one given the same number: the boot
    and its leader's start time. Kept with a command's row, so that a Cockpit that
    crashed can end the group it left. None where `/proc` cannot say (not Linux)."""
    try:
        boot = BOOT_ID.read_text(encoding="ascii").strip()
        started = int(stat_fields(pid)[STARTED_FIELD])
    except (OSError, ValueError, IndexError):
        return None
    return {"pid": pid, "boot": boot, "started": started}


def end_marked_group(mark: object) -> bool:
    """SIGKILL the group `mark` (from `group_mark`) names, when its leader is still the
    process marked: the same boot, the same start time. True when it was. A group whose
    leader is gone is left alone: its number may now be another process's."""
    if not isinstance(mark, Mapping):
        return False
    pid = mark.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
        return False
    if group_mark(pid) != {"pid": pid, "boot": mark.get("boot"), "started": mark.get("started")}:
        return False
    signal_group(pid, signal.SIGKILL)
    return True
