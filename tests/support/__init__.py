"""Helpers of the tests: agents, servers, waits, builders (no tests)."""
