"""The kit the bundled agents (`acp/demo_agent.py`, `acp/claude_agent.py`) are built from.

The agents are programs Cockpit runs by path; their code lives here, importable, so that
nothing is copied between them: the hardened stdio streams, the session modes and option
selectors every agent advertises, the permission options, the errors they answer with.
`demo/` and `claude/` hold each agent's own modules. This package imports nothing on
purpose: `cockpit agents` reads the demo's scenario words through it without loading the
ACP SDK.
"""
