"""A process whose creation is cut (every task cancelled at once, as when Cockpit closes or
a test ends) never hangs the close: Python 3.11's own creation, cut before the pipes were
connected, waits for ever. Run in a child interpreter, so that a hang is a failure here."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from cockpit.engine.agent_process import create_counted_subprocess
    from cockpit.spawning import spawn

    made = []

    async def main():
        pipe = asyncio.subprocess.PIPE
        for _ in range(6):
            made.append(asyncio.ensure_future(spawn("sleep", "30", stdout=pipe, stderr=pipe)))
        for _ in range(3):  # an agent's
            agent = create_counted_subprocess(
                "sleep", "30", limit=1000, stdout=pipe, stderr=pipe, start_new_session=True
            )
            made.append(asyncio.ensure_future(agent))
        await asyncio.sleep(0)  # each creation now waits for its pipes

    runner = asyncio.Runner()
    runner.run(main())
    runner.close()  # cancels every creation under way
    print("closed", sum(task.cancelled() for task in made))
    """
)


def test_a_cut_creation_never_hangs_the_close() -> None:
    ran = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split()[0] == "closed"
