"""The CPU time a whole process group has used, as Linux tells it in `/proc`.

An agent is often a launcher (an npm script, a shell) whose child does the work, so the
process Cockpit started may sit idle while the agent works: what counts is its whole
process group. The standard library reads no other process's CPU time (`os.times` and
`resource` know only this process and its reaped children), so elsewhere than Linux the
answer is None, and a starting agent is held to wall time only.
"""

from __future__ import annotations

import os

PROC = "/proc"


def stat_fields(pid: int | str) -> list[bytes]:
    """The fields of `/proc/PID/stat` after the command name (which may hold spaces and
    parentheses): the state first, then the parent's pid, the process group, and so on
    (proc(5)'s numbering less 3). OSError when there is no such process."""
    with open(f"{PROC}/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()


def group_cpu(pgid: int) -> float | None:
    """CPU seconds the processes of group `pgid` have used: user and system time of each,
    and of its children that exited and were reaped (their time moves to their parent, so
    a helper that came and went still counts). None where the system has no `/proc`."""
    try:
        entries = os.scandir(PROC)
    except OSError:
        return None
    ticks = 0
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                fields = stat_fields(entry.name)
                if int(fields[2]) == pgid:
                    ticks += sum(int(value) for value in fields[11:15])
            except (OSError, ValueError, IndexError):  # it exited while it was read
                continue
    return ticks / os.sysconf("SC_CLK_TCK")
