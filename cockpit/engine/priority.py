"""Agents run at a lower CPU priority than Cockpit, so the screen answers the keyboard
while eight of them work flat out.

Each agent (and each command it runs through Cockpit) starts in its own session, and on
Linux with autogroup scheduling a session is a scheduling group of its own: every agent
then weighs as much as the user's whole terminal session, and eight busy agents leave
Cockpit a ninth of the CPU. A process's nice value only counts inside its group, so both
are lowered: the process's nice value, and its group's (`/proc/PID/autogroup`).
"""

from __future__ import annotations

import contextlib
import os
import re

MAX_NICE = 19

_AUTOGROUP = re.compile(r"\bnice\s+(-?\d+)\s*$")


def autogroup_nice(text: str) -> int | None:
    """The nice value in a `/proc/PID/autogroup` line (`/autogroup-42 nice 0`).

    The kernel shows nothing for a process in the root group (one started from init's
    session, as under a service manager or a CI runner); that group weighs as nice 0."""
    line = text.strip()
    if not line:
        return 0
    match = _AUTOGROUP.search(line)
    return int(match.group(1)) if match else None


def lowered(current: int, by: int) -> int:
    """`current` made lower in priority by `by` steps, within the kernel's range."""
    return max(current, min(MAX_NICE, current + by))


def lower_priority(pid: int, by: int) -> None:
    """Lower the CPU priority of the process `pid` (a session leader Cockpit started) and
    of its autogroup by `by` steps below Cockpit's own. Best effort: where the system has
    no such control, or refuses it, the process keeps the priority it has."""
    if by <= 0:
        return
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, pid, lowered(os.getpriority(os.PRIO_PROCESS, 0), by))
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/autogroup", encoding="ascii") as own:
            ours = autogroup_nice(own.read())
        if ours is not None:
            with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as group:
                group.write(str(lowered(ours, by)))
