"""The same benchmarks on two versions of the code, side by side in one run:
`python -m tests.bench.compare --base REV [--rounds N] BENCH[:ARGS] ...`.

A change meant to keep behaviour and speed (a refactoring) is measured against the commit
before it. Each benchmark runs `python -m tests.bench.BENCH --json ARGS` in a checkout of
`REV` and in this tree, alternating pair by pair so both see the same load on a shared
machine; every number the benchmark prints is reported as base, this tree and their ratio
(medians of the rounds). The benchmarks run from the tree they measure (`PYTHONPATH` and the
working folder), so each version runs its own code and its own benchmark script.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]


def numbers(value: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a benchmark's JSON, named by its path (booleans are not numbers)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield prefix, float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from numbers(item, f"{prefix}.{key}" if prefix else str(key))


def run(tree: Path, bench: str, arguments: list[str]) -> dict[str, float]:
    """One run of a benchmark from `tree`: its numbers."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", f"tests.bench.{bench}", "--json", *arguments]
    done = subprocess.run(
        command, cwd=tree, env=environment, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{bench} failed in {tree.name}:\n{done.stderr[-2000:]}")
    start = done.stdout.find("{")
    return dict(numbers(json.loads(done.stdout[start:])))


def checkout(revision: str, into: Path) -> Path:
    """A detached worktree of `revision` (removed by `forget`)."""
    tree = into / "base"
    subprocess.run(
        ["git", "-C", str(HERE), "worktree", "add", "--detach", "-q", str(tree), revision],
        check=True,
    )
    return tree


def forget(tree: Path) -> None:
    subprocess.run(
        ["git", "-C", str(HERE), "worktree", "remove", "--force", str(tree)], check=False
    )


def compare(base: Path, benches: list[str], rounds: int) -> dict[str, dict[str, list[float]]]:
    """Each benchmark's numbers: name -> [base median, this tree's median, ratio]."""
    report: dict[str, dict[str, list[float]]] = {}
    for spec in benches:
        bench, _, extra = spec.partition(":")
        arguments = extra.split() if extra else []
        runs: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
        for _ in range(rounds):
            runs["base"].append(run(base, bench, arguments))
            runs["head"].append(run(HERE, bench, arguments))
        figures: dict[str, list[float]] = {}
        for name in runs["head"][0]:
            if not all(name in one for one in runs["base"]):
                continue
            before = statistics.median(one[name] for one in runs["base"])
            after = statistics.median(one[name] for one in runs["head"])
            ratio = after / before if before else float("nan")
            figures[name] = [before, after, round(ratio, 3)]
        report[spec] = figures
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.compare", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("benches", nargs="+", help="BENCH or BENCH:ARGS (e.g. 'tui:--only cold')")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = checkout(options.base, Path(folder))
        try:
            report = compare(base, options.benches, options.rounds)
        finally:
            forget(base)
    if options.json:
        print(json.dumps(report, indent=2))
        return
    for spec, figures in report.items():
        print(f"## {spec}  (base {options.base}, {options.rounds} rounds, medians)")
        for name, (before, after, ratio) in figures.items():
            print(f"  {name:44} {before:>12.4g} {after:>12.4g}   ratio {ratio}")


if __name__ == "__main__":
    main()
