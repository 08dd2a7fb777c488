"""The demo agent's entry point (`acp/demo_agent.py` runs `main`): its flags, the check
that its handlers match the scenario file, and the protocol served on stdio."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence

from cockpit.agentkit.demo.agent import DemoAgent
from cockpit.agentkit.demo.handlers import HANDLERS
from cockpit.agentkit.demo.turn import write_stderr
from cockpit.agentkit.scenarios import check_handlers, read_scenarios
from cockpit.agentkit.stdio import protocol_streams, serve_agent


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line flags."""
    parser = argparse.ArgumentParser(description="Cockpit's scripted demo ACP agent.")
    parser.add_argument("--hang-initialize", action="store_true", help="never answer initialize")
    parser.add_argument(
        "--start-delay", type=float, default=0.0, metavar="S", help="answer initialize after S s"
    )
    parser.add_argument("--slow", action="store_true", help="stream every turn slowly")
    parser.add_argument(
        "--protocol-version", type=int, metavar="N", help="answer initialize with version N"
    )
    parser.add_argument(
        "--exit-on-start", type=int, metavar="CODE", help="exit with CODE before reading"
    )
    return parser.parse_args(argv)


async def serve(options: argparse.Namespace, scenarios: dict[str, str]) -> None:
    """Run the agent until the client closes stdin."""
    reader, writer = await protocol_streams()
    agent = DemoAgent(writer, slow=options.slow, hang=options.hang_initialize, scenarios=scenarios)
    agent.protocol_version = options.protocol_version
    agent.start_delay = options.start_delay
    await serve_agent(agent, reader, writer)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, check the scenario table, then serve the protocol on stdio. A
    scenario word without a handler, or a handler without a word, stops the agent before
    it serves anything (a ScenarioError naming them)."""
    options = parse_args(argv)
    if options.exit_on_start is not None:
        write_stderr("demo agent: exiting at start\n")
        return int(options.exit_on_start)
    scenarios = read_scenarios()
    check_handlers(scenarios, HANDLERS)
    asyncio.run(serve(options, scenarios))
    return 0
