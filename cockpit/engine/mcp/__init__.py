"""The user's MCP servers (`mcp.toml` in Cockpit's config folder): which of them each agent
is handed as it opens its session, and why the others are left out."""
