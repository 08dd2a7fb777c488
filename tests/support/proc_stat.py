"""What Linux says of a process in `/proc/PID/stat`, read one way for the tests and the
benchmarks (the engine's own reading, `cockpit.engine.group_cpu`)."""

from __future__ import annotations

import os

from cockpit.engine.group_cpu import stat_fields as stat_fields


def parent_of(pid: int | str) -> int:
    """The pid of the process's parent."""
    return int(stat_fields(pid)[1])


def cpu_seconds(pid: int | str) -> float:
    """User plus system CPU seconds of a process: all its threads, none of its children."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
