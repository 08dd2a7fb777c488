"""An agent that starts writing at once and never answers: a helper of its own, in a session
of its own, writes a line to its stderr five times a second while it sleeps. Its process
group uses no CPU time meanwhile: only its output shows it is alive.

Standard library only, run as `python -I -S chatty_agent.py` (a few milliseconds of CPU to
start, however busy the machine). `chatty_agent.py --helper S` is the helper alone, for S
seconds (the tiny agent's `chatter=S`). The helper ends with the process that started it:
it holds that process's stderr, and until it closes it, asyncio does not see the process
end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def write_while_parent_lives(seconds: float) -> None:
    """A line to stderr five times a second, for `seconds` or until the parent is gone."""
    parent = os.getppid()
    end = time.monotonic() + seconds
    while os.getppid() == parent and time.monotonic() < end:
        print("loading...", file=sys.stderr, flush=True)
        time.sleep(0.2)


def helper(seconds: str) -> list[str]:
    """The command line of the helper."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), "--helper", seconds]


if __name__ == "__main__":
    if sys.argv[1:2] == ["--helper"]:
        write_while_parent_lives(float(sys.argv[2]))
    else:
        subprocess.Popen(helper("inf"), start_new_session=True)
        time.sleep(3600)
