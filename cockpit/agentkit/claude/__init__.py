"""The Claude agent (`acp/claude_agent.py`), by job: its settings and key, the model's
instructions and tools, its sessions and their chunk logs, a turn's step loop (the model
stream) and its tool calls, the replay of a log, the ACP agent and its entry point."""
