"""grapharc-tools: tools for the agent harness, each confining itself to a workspace."""
