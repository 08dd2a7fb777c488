"""The Textual user interface of Cockpit."""
