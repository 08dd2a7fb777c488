"""`cockpit agents`: the agents Cockpit knows, whether each is installed, and the demo
agent's scenario words."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cockpit.agentkit.scenarios import read_scenarios, scenarios_path
from cockpit.cli.exits import EXIT_OK
from cockpit.client import local_agents


def demo_scenarios() -> dict[str, str]:
    """The demo agent's scenario words, read from the scenario file it runs by (none when
    the file is not there)."""
    path = scenarios_path()
    if not path.is_file():
        return {}
    return read_scenarios(path)


def agents_command(args: argparse.Namespace) -> int:
    agents, problems = local_agents()
    rows: list[dict[str, Any]] = [
        {
            "name": info.spec.name,
            "title": info.spec.label,
            "command": list(info.spec.command),
            "available": info.installed,
            "install": info.spec.install,
            "description": info.spec.description,
            "source": info.spec.source,
        }
        for info in agents
    ]
    scenarios = demo_scenarios()
    if args.json:
        print(
            json.dumps(
                {"agents": rows, "problems": problems, "demo_scenarios": scenarios},
                indent=2,
            )
        )
        return EXIT_OK
    for row in rows:
        mark = "available" if row["available"] else "not installed"
        print(f"{row['name']:<12} {mark:<13} {row['title']}")
        print(f"{'':<12} {' '.join(row['command'])}")
        if not row["available"] and row["install"]:
            print(f"{'':<12} install: {row['install']}")
    if scenarios:
        print("\nThe demo agent answers these words in a prompt:")
        for word, what in scenarios.items():
            print(f"  {word:<11} {what}")
    for problem in problems:
        print(f"\ncockpit: {problem}", file=sys.stderr)
    print('\nRun any other ACP agent with: cockpit run --agent-cmd "CMD ARGS" "prompt"')
    return EXIT_OK
