"""The checkpoint benchmark: `python -m tests.bench.checkpoints [--json] [--rounds N]`.

The `@` mention benchmark's synthetic 50,000-file repository (plus 200 untracked files and
thousands of ignored ones) is written to a temporary folder and committed. Each round, 10
files are changed (8 edited, 1 added, 1 deleted) and then, side by side in an order that
turns every round:

- `Checkpoints.take`, as a turn's end calls it: `git status` against Cockpit's kept copy
  of the index (with git's untracked cache), new entries for the paths it lists and new
  trees for their folders, counting the changed files, `commit-tree`, `update-ref` (the
  kept index's refresh that follows runs in the background, and is waited for before
  the next measure, untimed);
- `git status --porcelain` (no optional locks), the baseline any git tool pays to see
  what changed;
- the sure way, which a checkpoint took before and still takes when the quick one cannot
  say: `git add -A && git write-tree` into a copy of the agent's index.

The medians are kept; the ratios are against `git status` and the sure way.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cockpit.engine.checkpoints import Checkpoints
from cockpit.engine.checkpoints.git import git
from tests.bench.mentions import synthetic_tree, write_repo
from tests.bench.report import print_result

CHANGED = 10
TARGET_MS = 100.0


async def _status(root: Path) -> None:
    await git(root, "--no-optional-locks", "status", "--porcelain")


async def _sure(root: Path) -> None:
    folder = tempfile.mkdtemp(prefix="bench-index-")
    env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
    try:
        shutil.copy2(root / ".git" / "index", env["GIT_INDEX_FILE"])
        await git(root, "add", "-A", env=env)
        await git(root, "write-tree", env=env)
    finally:
        shutil.rmtree(folder, True)


async def _checkpoint(book: Checkpoints, number: int) -> float:
    """The time of one turn's checkpoint, its background refresh waited for untimed."""
    started = time.perf_counter()
    await book.take(number, "end")
    took = time.perf_counter() - started
    await book.settled()
    return took


def _change(root: Path, visible: list[str], round_number: int) -> None:
    """Change 10 files: edit 8, add 1, delete 1 (one a round, never the same)."""
    for offset in range(8):
        path = root / visible[(round_number * 97 + offset * 13) % len(visible)]
        path.write_text(f"round {round_number} edit {offset}\n" * 20)
    (root / f"added_{round_number}.py").write_text(f"print({round_number})\n")
    (root / visible[-1 - round_number]).unlink()


async def _timed(work: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await work()
    return time.perf_counter() - started


async def measure(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as folder:
        root = Path(folder)
        write_repo(root)
        identity = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
        commit = ["git", *identity, "commit", "-q", "-m", "base"]
        await asyncio.to_thread(subprocess.run, commit, cwd=root, check=True)
        visible, _, _ = synthetic_tree()
        book = Checkpoints("bench", root)
        await book.take(0, "start")  # the first one: every later one is a turn's
        await book.settled()
        figures: dict[str, list[float]] = {"checkpoint": [], "status": [], "sure": []}
        changed: list[int] = []
        for number in range(1, rounds + 1):
            _change(root, visible, number)
            work: dict[str, Callable[[], Awaitable[Any]]] = {
                "status": lambda: _status(root),
                "sure": lambda: _sure(root),
            }
            order = ["checkpoint", *work]
            order = order[number % len(order) :] + order[: number % len(order)]
            for name in order:
                if name == "checkpoint":
                    figures[name].append(await _checkpoint(book, number))
                else:
                    figures[name].append(await _timed(work[name]))
            changed.append((await book.latest()).changed)  # type: ignore[union-attr]
    median = {name: statistics.median(times) for name, times in figures.items()}
    return {
        "files_in_repository": len(visible),
        "rounds": rounds,
        "files_changed_per_turn": sorted(set(changed)),
        "checkpoint_ms": round(median["checkpoint"] * 1000, 1),
        "checkpoint_max_ms": round(max(figures["checkpoint"]) * 1000, 1),
        "git_status_ms": round(median["status"] * 1000, 1),
        "sure_way_ms": round(median["sure"] * 1000, 1),
        "ratio_checkpoint_vs_status": round(median["checkpoint"] / median["status"], 2),
        "ratio_checkpoint_vs_sure_way": round(median["checkpoint"] / median["sure"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.checkpoints", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=9, help="turns checkpointed (median kept)")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(max(1, args.rounds)))
    met = result["checkpoint_ms"] <= TARGET_MS
    target = f"target <= {TARGET_MS:g}"
    print_result(result, as_json=args.json, met=met, key="checkpoint_ms", target=target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
