"""The engine end to end, through real agents."""
