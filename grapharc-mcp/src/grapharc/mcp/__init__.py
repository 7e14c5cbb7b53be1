"""GraphARC and the Model Context Protocol: MCP servers' tools governed like GraphARC's own."""
