"""What Linux says of a process in `/proc/PID/stat`, read one way for the tests and the
benchmarks."""

from __future__ import annotations

import os


def stat_fields(pid: int | str) -> list[bytes]:
    """The fields of `/proc/PID/stat` after the command name (which may hold spaces and
    parentheses): the state first, then the parent's pid, and so on (proc(5)'s numbering
    less 3). OSError when there is no such process."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()


def parent_of(pid: int | str) -> int:
    """The pid of the process's parent."""
    return int(stat_fields(pid)[1])


def cpu_seconds(pid: int | str) -> float:
    """User plus system CPU seconds of a process: all its threads, none of its children."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
