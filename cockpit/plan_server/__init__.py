"""The plan tool: a stdio MCP server the agent runs, with `update_plan` and `read_plan`.

Cockpit keeps each session's plan; this server only carries the agent's calls to it over
the private socket named in its environment (see `cockpit.plan_protocol`). It imports
`mcp`, the protocol and the standard library alone, so it starts quickly and stays small
in every session, and a failure reaches the model as a tool result it can act on, never
as a protocol error.
"""
