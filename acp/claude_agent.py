"""Cockpit's Claude agent: a coding agent on the Anthropic Messages API, spoken to over ACP.

Cockpit launches it by path (`python acp/claude_agent.py`). It needs ANTHROPIC_API_KEY
(and honours ANTHROPIC_BASE_URL); without a key, session/new and session/prompt fail with
ACP's auth-required error.

Its history is an append-only chunk log (`store.chunk_log`): one entry per sealed block,
written as the block seals, in `$COCKPIT_DATA_DIR/claude-agent/<session>.db`. Every model
request is `store.requests.compose_request` over that log, so earlier steps are sent as
the same bytes every time and the prompt cache prefix grows step by step; every call is
recorded with the log position it was built from, so `cockpit inspect` can show it.

Files and commands go through the client (`fs/*`, `terminal/*`, permission requests), so
the client sees, confines and records them; listings and searches (find, grep) run here.
Modes: ask (edits and commands ask first), accept (edits go ahead, commands ask), plan (no
edits, no commands).

This file is only the entry point: the agent is `cockpit.agentkit.claude`.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from cockpit.agentkit.claude.main import main
except ImportError:  # run by path from a checkout: put the project root on the path
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from cockpit.agentkit.claude.main import main

if __name__ == "__main__":
    sys.exit(main())
