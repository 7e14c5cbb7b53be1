"""GraphARC tools plugin."""
