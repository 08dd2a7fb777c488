"""The plan tool's start and size: `python -m tests.bench.plan_server [--json] [--rounds N]
[--servers N]`.

Each session's agent runs one plan server, so thirty sessions run thirty. Each round,
side by side in an order that turns every round:

- thirty plan servers (`python -m cockpit.plan_server`) started at once as MCP stdio
  servers by the mcp SDK's client, each "ready" once `initialize` and `tools/list` are
  answered; then one more started alone;
- the baseline: the smallest stdio MCP server the SDK makes (an `MCPServer` with one
  tool that answers "pong"), started the same way.

Measured: seconds from the spawn to ready (median and slowest of the thirty; the one
started alone), and each server's resident memory (VmRSS, from /proc) once all thirty are
ready (median; their sum). Medians over rounds are kept; ratios are the plan server's
against the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from tests.bench.report import print_result
from tests.bench.service_procs import rss_mb
from tests.support.checkout import tree_first
from tests.support.proc_stat import parent_of

SERVERS = 30
TARGET_RSS_RATIO = 1.1
"""The plan server's memory, against the SDK's smallest server: Cockpit's part of it (its
tools, the protocol) must cost next to nothing; the rest is the SDK's own."""

BASELINE = (
    "from mcp.server import MCPServer\n"
    "server = MCPServer('baseline')\n"
    "def ping() -> str:\n"
    "    return 'pong'\n"
    "server.add_tool(ping)\n"
    "server.run('stdio')\n"
)

KINDS = {"plan": ["-m", "cockpit.plan_server"], "baseline": ["-c", BASELINE]}


def parameters(kind: str) -> StdioServerParameters:
    """How an agent would start a server of `kind` (the plan server with no socket: the
    tools are listed, never called)."""
    return StdioServerParameters(
        command=sys.executable, args=KINDS[kind], env=tree_first(dict(os.environ))
    )


def children() -> set[int]:
    """The pids of this process's children."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if parent_of(entry.name) == os.getpid():
                    found.add(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


async def one_server(kind: str, ready: list[float], release: asyncio.Event) -> None:
    """Start one server, time it to ready, and hold it until `release`."""
    started = time.perf_counter()
    async with Client(parameters(kind), mode="legacy") as client:
        await client.list_tools()
        ready.append(time.perf_counter() - started)
        await release.wait()


async def many_at_once(kind: str, count: int) -> dict[str, float]:
    """`count` servers of `kind` started at once: their times to ready and their RSS."""
    before = children()
    ready: list[float] = []
    release = asyncio.Event()
    tasks = [asyncio.ensure_future(one_server(kind, ready, release)) for _ in range(count)]
    while len(ready) < count:
        done = [task for task in tasks if task.done() and task.exception() is not None]
        if done:
            raise RuntimeError(f"a {kind} server failed") from done[0].exception()
        await asyncio.sleep(0.01)
    rss = [rss_mb(pid) for pid in children() - before]
    release.set()
    await asyncio.gather(*tasks)
    if len(rss) != count:
        raise RuntimeError(f"found {len(rss)} {kind} servers, not {count}")
    return {
        "ready_median_s": statistics.median(ready),
        "ready_slowest_s": max(ready),
        "rss_median_mb": statistics.median(rss),
        "rss_sum_mb": sum(rss),
    }


async def alone(kind: str) -> float:
    """Seconds to ready of one server of `kind` started alone."""
    ready: list[float] = []
    release = asyncio.Event()
    release.set()
    await one_server(kind, ready, release)
    return ready[0]


async def measure(rounds: int, count: int) -> dict[str, Any]:
    figures: dict[str, dict[str, list[float]]] = {kind: {} for kind in KINDS}
    for number in range(rounds):
        order = list(KINDS) if number % 2 == 0 else list(reversed(KINDS))
        for kind in order:
            measured = await many_at_once(kind, count)
            measured["alone_ready_s"] = await alone(kind)
            for name, value in measured.items():
                figures[kind].setdefault(name, []).append(value)
    median = {
        kind: {name: statistics.median(values) for name, values in named.items()}
        for kind, named in figures.items()
    }
    plan, base = median["plan"], median["baseline"]
    result: dict[str, Any] = {"servers_at_once": count, "rounds": rounds}
    for name in ("alone_ready_s", "ready_median_s", "ready_slowest_s"):
        result[f"plan_{name}"] = round(plan[name], 3)
        result[f"baseline_{name}"] = round(base[name], 3)
        result[f"{name}_ratio"] = round(plan[name] / base[name], 2)
    for name in ("rss_median_mb", "rss_sum_mb"):
        result[f"plan_{name}"] = round(plan[name], 1)
        result[f"baseline_{name}"] = round(base[name], 1)
        result[f"{name}_ratio"] = round(plan[name] / base[name], 2)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.plan_server", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the median counts)")
    parser.add_argument("--servers", type=int, default=SERVERS, help="servers started at once")
    args = parser.parse_args(argv)
    result = asyncio.run(measure(args.rounds, args.servers))
    met = result["rss_median_mb_ratio"] <= TARGET_RSS_RATIO
    target = f"target <= {TARGET_RSS_RATIO}"
    print_result(result, as_json=args.json, met=met, key="rss_median_mb_ratio", target=target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
