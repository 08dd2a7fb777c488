"""The Claude agent's entry point (`acp/claude_agent.py` runs `main`): warnings to
stderr, the protocol served on stdio, every turn stopped and every log closed at the end."""

from __future__ import annotations

import asyncio
import logging
import sys
import time

from cockpit.agentkit.claude.agent import ClaudeAgent
from cockpit.agentkit.stdio import protocol_streams, serve_agent

log = logging.getLogger("claude-agent")


async def serve() -> None:
    """Run the agent until the client closes stdin."""
    reader, writer = await protocol_streams()
    agent = ClaudeAgent()
    try:
        await serve_agent(agent, reader, writer)
    finally:
        await agent.close()


def main() -> int:
    """Log warnings to stderr (stdout is the protocol), then serve."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="claude agent: %(levelname)s %(message)s"
    )
    started = time.monotonic()
    asyncio.run(serve())
    log.debug("served for %.1f s", time.monotonic() - started)
    return 0
