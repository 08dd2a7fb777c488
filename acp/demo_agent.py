"""Cockpit's scripted demo agent: an ACP agent over stdio with no keys and no network.

Cockpit launches it by path (`python acp/demo_agent.py [flags]`). It streams the way real
agents do (3-4 character chunks, no messageId, an empty chunk opening every block) and
keeps each session's history so `session/load` can replay it.

Scenario words (whole words, any case, anywhere in the prompt; several combine) are listed,
in running order and with what each does, in `demo_scenarios.toml` beside this file;
`cockpit agents` prints them and the tour (the reply when no word is given) shows them.

Flags:

  --hang-initialize   never answer `initialize`
  --start-delay S     take S seconds to answer `initialize` (a slow agent's start)
  --protocol-version N  answer `initialize` with protocol version N (to test refusal)
  --slow              stream every turn slowly
  --exit-on-start N   exit with code N before reading anything

This file is only the entry point: the agent is `cockpit.agentkit.demo`.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    from cockpit.agentkit.demo.main import main
except ImportError:  # run by path from a checkout: put the project root on the path
    sys.path.append(str(Path(__file__).resolve().parent.parent))
    from cockpit.agentkit.demo.main import main

if __name__ == "__main__":
    sys.exit(main())
