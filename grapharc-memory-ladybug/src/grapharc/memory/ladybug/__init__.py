"""GraphARC memory/ladybug plugin."""
