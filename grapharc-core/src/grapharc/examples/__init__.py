"""Shipped example surfaces: registries, state schemas and scripted planners for the demos."""
