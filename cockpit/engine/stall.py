"""When a starting agent has stalled: the rule, with no I/O.

Wall time alone cannot tell a hung agent from a slow one. Agents run at a lower priority
than Cockpit, and on a loaded machine a real agent's handshake took 25 s where it takes
4 s when the machine is idle. An agent that works uses CPU time or writes something; one
that does neither for a while is waiting on something that will not come. So a start
fails when the agent has done nothing at all for `STALL_LIMIT` seconds, and wall time is
only the hard ceiling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

STALL_LIMIT = 30.0
"""Seconds a starting agent may use no CPU time and write nothing before it has failed."""

STALL_ENV = "COCKPIT_STALL_LIMIT"
"""The environment variable that sets another stall limit, in seconds."""


@dataclass(frozen=True)
class Sample:
    """What a starting agent had done at one moment."""

    at: float
    """When, in seconds on a monotonic clock."""
    cpu: float | None
    """CPU seconds its process group had used; None where the system cannot say."""
    written: int
    """Bytes it had written to its stdout and stderr."""


def busy(before: Sample, after: Sample) -> bool:
    """True when the agent did something between two samples: its CPU time or its output
    moved. Without a CPU reading it always counts as busy: an agent that computes without
    writing cannot be told from a hung one, so only the ceiling may end its start."""
    return after.cpu is None or after.cpu != before.cpu or after.written != before.written


def quiet_since(samples: Sequence[Sample]) -> Sample:
    """The sample the agent's quiet is counted from: the last one that shows it did
    something since the one before, or the first (the agent was just spawned)."""
    anchor = samples[0]
    for before, after in pairwise(samples):
        if busy(before, after):
            anchor = after
    return anchor


def stalled(samples: Sequence[Sample], limit: float) -> bool:
    """True when the agent has done nothing for at least `limit` seconds by the newest
    sample."""
    return samples[-1].at - quiet_since(samples).at >= limit


def stall_limit_setting(text: str | None) -> tuple[float, str | None]:
    """The stall limit `COCKPIT_STALL_LIMIT` asks for (unset: the default), and what is
    wrong with it when it is not a positive number of seconds (the default is used)."""
    if text is None or not text.strip():
        return STALL_LIMIT, None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        return STALL_LIMIT, (
            f"{STALL_ENV} must be a number of seconds above 0, not {text.strip()[:40]!r}: "
            f"an agent that does nothing while it starts fails after {STALL_LIMIT:g} s."
        )
    return value, None
