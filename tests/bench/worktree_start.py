"""A worktree session's start: `python -m tests.bench.worktree_start [--json] [--rounds N]`.

The `@` mention benchmark's synthetic 50,000-file repository (plus 200 untracked files and
thousands of ignored ones) is written to a temporary folder and committed once. Each round,
side by side in an order that turns every round:

- a worktree session, as the new-session dialog's choice makes it: `create_session(...,
  worktree=WorktreeRequest())` then `start`, until the demo agent is ready for its first
  prompt (the repository has no setup command);
- the baseline: `git worktree add -b BRANCH FOLDER HEAD` run by hand (git's own work),
  then a plain session in the checkout, created and started the same way.

Both parts of each are timed too, so what differs is seen where it is. Every worktree and
branch made is removed after its round (`git worktree remove --force`, `git branch -D`); the
engine's store lives in a temporary data folder. The medians are kept; the ratio is the
worktree session's against the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from cockpit.api import WorktreeRequest, read_worktree
from cockpit.engine.checkpoints.git import git
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from tests.bench.mentions import synthetic_tree, write_repo
from tests.bench.report import print_result

TARGET_RATIO = 1.1


def committed_repo(root: Path, files: int | None = None) -> int:
    """The benchmark's repository in `root`, committed: the 50,000-file one (None), or the
    first `files` paths of its tree alone (for a quick run). Returns its tracked files."""
    if files is None:
        write_repo(root)
        tracked = len(synthetic_tree()[0])
    else:
        for path in synthetic_tree()[0][:files]:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).touch()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        tracked = files
    identity = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", *identity, "commit", "-q", "-m", "base"], cwd=root, check=True)
    return tracked


async def remove(root: Path, path: str, branch: str) -> None:
    """Take a worktree and its branch away, as a user would by hand."""
    await git(root, "worktree", "remove", "--force", path)
    await git(root, "branch", "-D", "--", branch)


async def worktree_session(engine: Engine, root: Path) -> dict[str, float]:
    """Seconds to create a worktree session and to start its agent; the worktree removed."""
    started = time.perf_counter()
    record = await engine.create_session("demo", root, worktree=WorktreeRequest())
    created = time.perf_counter()
    await engine.start(record.id)
    ready = time.perf_counter()
    await engine.stop(record.id)
    made = read_worktree(record.info)
    assert made is not None, "the session has no worktree"
    await remove(root, made.path, made.branch)
    return {"create": created - started, "start": ready - created, "total": ready - started}


async def by_hand(engine: Engine, root: Path, place: Path, number: int) -> dict[str, float]:
    """Seconds for `git worktree add` alone, and to create and start a plain session in the
    checkout; the worktree removed."""
    branch, path = f"bench/hand-{number}", str(place / f"hand-{number}")
    started = time.perf_counter()
    await git(root, "worktree", "add", "-q", "-b", branch, path, "HEAD")
    added = time.perf_counter()
    record = await engine.create_session("demo", root)
    await engine.start(record.id)
    ready = time.perf_counter()
    await engine.stop(record.id)
    await remove(root, path, branch)
    return {"create": added - started, "start": ready - added, "total": ready - started}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def measure(rounds: int, files: int | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-worktree-start-") as folder:
        base = Path(folder)
        root = base / "repository"
        root.mkdir()
        tracked = await asyncio.to_thread(committed_repo, root, files)
        home = base / "home"
        os.environ["COCKPIT_HOME"] = str(home)
        engine = await Engine.open(home, registry=load_registry(home / "config"))
        runs: dict[str, list[dict[str, float]]] = {"worktree": [], "baseline": []}
        try:
            await by_hand(engine, root, base, 0)  # warm: git's caches, the agent's imports
            for number in range(1, rounds + 1):
                order = ["worktree", "baseline"][:: 1 if number % 2 else -1]
                for name in order:
                    if name == "worktree":
                        runs[name].append(await worktree_session(engine, root))
                    else:
                        runs[name].append(await by_hand(engine, root, base, number))
            listing = await git(root, "worktree", "list", "--porcelain")
            branches = await git(root, "branch", "--list", "--format=%(refname:short)")
        finally:
            await engine.close()
    left = listing.decode().count("worktree ") - 1 + len(branches.split()) - 1
    median = {
        (name, part): statistics.median(run[part] for run in runs[name])
        for name in runs
        for part in ("create", "start", "total")
    }
    return {
        "files_in_repository": tracked,
        "rounds": rounds,
        "worktree_session_ms": _ms(median["worktree", "total"]),
        "worktree_create_ms": _ms(median["worktree", "create"]),
        "worktree_start_ms": _ms(median["worktree", "start"]),
        "baseline_ms": _ms(median["baseline", "total"]),
        "git_worktree_add_ms": _ms(median["baseline", "create"]),
        "plain_create_and_start_ms": _ms(median["baseline", "start"]),
        "ratio_worktree_vs_baseline": round(
            median["worktree", "total"] / median["baseline", "total"], 2
        ),
        "worktrees_or_branches_left": left,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.worktree_start", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=7, help="sessions of each kind (median)")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(max(1, args.rounds)))
    met = result["ratio_worktree_vs_baseline"] <= TARGET_RATIO
    key, target = "ratio_worktree_vs_baseline", f"target <= {TARGET_RATIO:g}"
    print_result(result, as_json=args.json, met=met, key=key, target=target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
