"""The prompt-cache benchmark: `python -m tests.bench.cache [--json] [--steps N]`.

Run from a source checkout: it uses the fake Messages API of the tests
(`tests/support/fake_anthropic.py`), which accounts for a prompt cache the way the API does.

1. A real Claude-agent subprocess, driven through Cockpit's engine, answers one scripted
   coding turn of N model calls (default 20: list, read, search, edit and run, then a
   summary) in a generated project. Its requests go to a fake server, which reports the
   usage of each: input, cache write, cache read.
2. In the same run, the request of every one of those calls is rebuilt from the agent's
   chunk log with the naive builder (one assistant message and one result message per
   turn, regrouped on every request, as before the chunk log) and sent to a second fake
   server with an empty cache.

The figure that matters is the share of input tokens served from the cache on steps 2
and later, for each builder. The effective input cost weighs cache reads at 0.1 and
cache writes at 1.25 of a plain input token, as the API bills them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from cockpit.api import PermissionRequest
from cockpit.engine.core import Engine
from cockpit.engine.registry import load_registry
from store.chunk_log import ChunkLog, log_path
from store.requests import naive_request, without_breakpoints
from tests.support.fake_anthropic import FakeAnthropic, Reply, reply, text, thinking, tool

MODULES = 8
TARGETS = {"ours_cache_share": (">=", 0.9)}


def module_text(index: int) -> str:
    """A plausible Python module of about 2 KB."""
    rng = random.Random(index)
    words = ["load", "parse", "render", "store", "fetch", "merge", "check", "count"]
    lines = [f'"""Module {index}: helpers for the demo project."""', "", f"VERSION_{index} = 1", ""]
    for number in range(6):
        verb, noun = rng.choice(words), rng.choice(["items", "rows", "pages", "users"])
        lines += [
            "",
            f"def {verb}_{noun}_{number}(values: list[int]) -> int:",
            f'    """{verb.title()} the {noun} and return how many there were."""',
            "    total = 0",
            "    for value in values:",
            f"        if value % {number + 2} == 0:",
            "            total += value",
            "    return total",
        ]
    return "\n".join(lines) + "\n"


def make_project(folder: Path) -> None:
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text(
        "# Demo project\n\nSmall helpers, one module per concern. Run `wc -l src/*.py`.\n"
    )
    for index in range(MODULES):
        (folder / "src" / f"mod_{index}.py").write_text(module_text(index))


def script(steps: int) -> list[Reply]:
    """One turn of `steps` model calls: a tool call per step, then a summary."""
    actions: list[tuple[str, dict[str, Any]]] = [("list_files", {})]
    actions.append(("read_file", {"path": "README.md"}))
    index = 0
    while len(actions) < steps - 1:
        module = f"src/mod_{index % MODULES}.py"
        kind = len(actions) % 5
        if kind == 0:
            actions.append(("search", {"pattern": f"VERSION_{index % MODULES}", "glob": "*.py"}))
        elif kind == 1:
            actions.append(("read_file", {"path": module}))
        elif kind == 2:
            old, new = f"VERSION_{index % MODULES} = 1", f"VERSION_{index % MODULES} = 2"
            actions.append(("edit_file", {"path": module, "old_text": old, "new_text": new}))
        elif kind == 3:
            actions.append(("run_command", {"command": "wc -l src/*.py"}))
        else:
            actions.append(("read_file", {"path": module, "offset": 1, "limit": 20}))
            index += 1
    replies = []
    for number, (name, arguments) in enumerate(actions[: steps - 1], start=1):
        blocks = [text(f"Step {number}: next I will use {name}."), tool(name, arguments)]
        if number % 4 == 1:
            blocks.insert(0, thinking(f"Thinking about step {number}.", f"sig-{number}"))
        replies.append(reply(*blocks))
    replies.append(reply(text("Done: I looked around, bumped the versions and checked the files.")))
    return replies


def share(usages: Sequence[Mapping[str, int]]) -> float:
    """Cache reads over all input tokens."""
    read = sum(u.get("cache_read_input_tokens", 0) for u in usages)
    total = sum(
        u.get(name, 0)
        for u in usages
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return read / total if total else 0.0


def cost(usages: Sequence[Mapping[str, int]]) -> float:
    """Input cost in plain-input-token equivalents (reads 0.1, writes 1.25)."""
    return sum(
        u.get("input_tokens", 0)
        + 1.25 * u.get("cache_creation_input_tokens", 0)
        + 0.1 * u.get("cache_read_input_tokens", 0)
        for u in usages
    )


def broken_prefixes(bodies: Sequence[Mapping[str, Any]]) -> int:
    """How many requests do not start with everything the previous request sent."""
    broken = 0
    for before, after in pairwise(bodies):
        sent = without_breakpoints(before["messages"])
        now = without_breakpoints(after["messages"])
        if json.dumps(now[: len(sent) - 1]) != json.dumps(sent[:-1]):
            broken += 1
    return broken


def allow(request: PermissionRequest) -> str | None:
    return next(
        (str(o["optionId"]) for o in request.options if str(o.get("kind", "")).startswith("allow")),
        None,
    )


async def run_agent_turn(folder: Path, steps: int, fake: FakeAnthropic) -> tuple[Path, float]:
    """Drive the agent through one scripted turn; returns its log file and the seconds."""
    project, home = folder / "project", folder / "home"
    make_project(project)
    fake.script(*script(steps))
    os.environ.update({"ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": fake.url})
    engine = await Engine.open(home, registry=load_registry(home / "config"), auto_answer=allow)
    try:
        record = await engine.create_session("claude", project)
        started = time.perf_counter()
        stop = await engine.prompt(record.id, "Bump every module's VERSION and check the files.")
        elapsed = time.perf_counter() - started
        if stop != "end_turn":
            raise RuntimeError(f"the scripted turn ended with {stop!r}")
        agent_session = (await engine.session(record.id)).agent_session_id
    finally:
        await engine.close()
    assert agent_session is not None
    return log_path(home, agent_session), elapsed


async def replay_naive(path: Path, fake: FakeAnthropic) -> list[dict[str, Any]]:
    """Send every call's request again, built the naive way from the same log positions."""
    import anthropic  # here: the SDK takes a second to import, in every test process

    log = await ChunkLog.open(path, create=False)
    client = anthropic.AsyncAnthropic(api_key="sk-bench", base_url=fake.url, max_retries=0)
    bodies = []
    try:
        entries = await log.entries()
        for call in await log.calls():
            request = naive_request(
                [e for e in entries if e.seq <= call.upto], await log.spec_of(call)
            )
            stream: Any = await client.messages.create(**request)
            async with stream:
                async for _ in stream:
                    pass
            bodies.append(request)
    finally:
        await client.close()
        await log.close()
    return bodies


async def measure(steps: int) -> dict[str, Any]:
    """Run both builders and return the figures."""
    with (
        tempfile.TemporaryDirectory(prefix="cockpit-bench-cache-") as scratch,
        FakeAnthropic() as ours_server,
        FakeAnthropic() as naive_server,
    ):
        path, elapsed = await run_agent_turn(Path(scratch), steps, ours_server)
        await replay_naive(path, naive_server)
        ours = [recorded.usage for recorded in ours_server.requests]
        naive = [recorded.usage for recorded in naive_server.requests]
        ours_bodies = ours_server.bodies()
        naive_bodies = naive_server.bodies()
    if len(ours) != steps or len(naive) != steps:
        raise RuntimeError(f"expected {steps} calls, saw {len(ours)} and {len(naive)}")
    later_ours, later_naive = ours[1:], naive[1:]
    total_input = sum(
        u[name]
        for u in later_ours
        for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return {
        "steps": steps,
        "turn_seconds": round(elapsed, 2),
        "input_tokens_steps_2plus": total_input,
        "ours_cache_share": round(share(later_ours), 4),
        "naive_cache_share": round(share(later_naive), 4),
        "share_ratio_ours_vs_naive": round(share(later_ours) / max(share(later_naive), 1e-9), 1),
        "ours_effective_input_cost": round(cost(later_ours)),
        "naive_effective_input_cost": round(cost(later_naive)),
        "cost_ratio_naive_vs_ours": round(cost(later_naive) / max(cost(later_ours), 1e-9), 2),
        "ours_broken_prefixes": broken_prefixes(ours_bodies),
        "naive_broken_prefixes": broken_prefixes(naive_bodies),
        "ours_per_step_share": [round(share([u]), 3) for u in ours],
        "naive_per_step_share": [round(share([u]), 3) for u in naive],
    }


def verdicts(result: Mapping[str, Any]) -> dict[str, bool]:
    return {name: result[name] >= goal for name, (_, goal) in TARGETS.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.bench.cache", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--steps", type=int, default=20, help="model calls in the turn (20)")
    args = parser.parse_args(argv)
    if args.steps < 3:
        parser.error("--steps must be at least 3")
    result = asyncio.run(measure(args.steps))
    met = verdicts(result)
    if args.json:
        print(json.dumps({**result, "targets_met": met}, indent=2))
        return 0
    width = max(map(len, result))
    for name, value in result.items():
        target = TARGETS.get(name)
        mark = (
            f"  target {target[0]} {target[1]}: {'met' if met[name] else 'MISSED'}"
            if target
            else ""
        )
        shown = " ".join(f"{v:.2f}" for v in value) if isinstance(value, list) else value
        print(f"{name:<{width}}  {shown}{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
