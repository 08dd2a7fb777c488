"""The TUI through Textual's Pilot."""
