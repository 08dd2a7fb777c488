"""Pictures of the TUI (pytest-textual-snapshot), beside their __snapshots__."""
