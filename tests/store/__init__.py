"""The store on a real SQLite file."""
