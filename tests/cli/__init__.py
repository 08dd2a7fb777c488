"""`cockpit` commands as a user runs them."""
