"""The demo agent (`acp/demo_agent.py`), by job: its script's texts, its sessions' saved
histories, a turn's streaming primitives, the scenarios (replies and tool calls), the
handler table that maps each scenario word to one, the ACP agent and its entry point."""
