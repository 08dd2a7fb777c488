"""What the open row loses when Cockpit is killed mid-reply.

`cockpit run` streams the demo agent's benchmark reply into a fresh store and is killed
with SIGKILL at a random moment, N times. Each time, the characters it had printed (what
the user saw) are compared with the open row the store kept. The loss is also given in
seconds of streaming at the run's own rate, beside the store's flush interval.

    .venv/bin/python -m tests.bench.kill [--kills 30] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from store.store import FLUSH_INTERVAL

REPLY_SIZE = 4_000_000
"""Characters the agent streams: more than any kill lets it send."""


@dataclass(frozen=True)
class Kill:
    """One kill: characters printed, characters stored, and the streaming rate."""

    printed: int
    stored: int
    rate: float

    @property
    def lost(self) -> int:
        return max(self.printed - self.stored, 0)

    @property
    def lost_seconds(self) -> float:
        return self.lost / self.rate if self.rate else 0.0


def _read_all(stream: IO[bytes], into: bytearray, started: list[float]) -> None:
    """Collect what Cockpit prints, noting when its first bytes came."""
    while chunk := stream.read1(65536):  # type: ignore[attr-defined]
        if not started:
            started.append(time.monotonic())
        into += chunk


def one_kill(folder: Path, after: float) -> Kill:
    """Stream, kill Cockpit `after` seconds into the reply, and measure."""
    project = folder / "project"
    project.mkdir()
    env = {**os.environ, "COCKPIT_HOME": str(folder / "home")}
    child = subprocess.Popen(
        [sys.executable, "-m", "cockpit", "run", "--agent", "demo", f"bench {REPLY_SIZE}"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    printed = bytearray()
    started: list[float] = []
    reader = threading.Thread(target=_read_all, args=(child.stdout, printed, started))
    reader.start()
    deadline = time.monotonic() + 30
    while not started and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(after)
    child.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    child.wait()
    reader.join(10)
    rate = len(printed) / max(killed - started[0], 1e-6) if started else 0.0
    with sqlite3.connect(folder / "home" / "cockpit.db") as db:
        row = db.execute(
            "SELECT text FROM messages WHERE kind = 'agent' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    stored = len(row[0].encode("utf-8")) if row else 0
    return Kill(len(printed), stored, rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    chance = random.Random(options.seed)
    kills: list[Kill] = []
    for _ in range(options.kills):
        with tempfile.TemporaryDirectory(prefix="cockpit-kill-") as folder:
            kills.append(one_kill(Path(folder), chance.uniform(0.2, 1.5)))
    lost = sorted(kill.lost for kill in kills)
    seconds = sorted(kill.lost_seconds for kill in kills)
    rate = statistics.median(kill.rate for kill in kills)
    print(f"{len(kills)} kills of cockpit run mid-reply, streaming at {rate:,.0f} bytes/s")
    print(
        f"lost bytes (printed, not stored): median {statistics.median(lost):,.0f}, max {lost[-1]:,}"
    )
    print(
        f"lost time: median {statistics.median(seconds) * 1000:.0f} ms, "
        f"max {seconds[-1] * 1000:.0f} ms; flush interval {FLUSH_INTERVAL * 1000:.0f} ms; "
        f"max/interval {seconds[-1] / FLUSH_INTERVAL:.2f}"
    )


if __name__ == "__main__":
    main()
