"""Cockpit: a terminal cockpit for many ACP coding-agent sessions at once."""

__version__ = "0.1.0"
