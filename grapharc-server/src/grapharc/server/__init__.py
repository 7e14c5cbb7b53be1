"""grapharc-server: GraphARC's HTTP API (FastAPI), started with ``grapharc serve``."""
