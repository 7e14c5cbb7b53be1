"""GraphARC memory/sqlite plugin."""
