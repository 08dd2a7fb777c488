"""Pure rules and property tests: no process, no database file of their own."""
