"""GraphARC server plugin."""
