"""GraphARC gateway plugin."""
