"""``grapharc mcp serve``: the graphs an operator registers, offered to MCP clients as tools.

One tool per registered graph starts a governed run of it (its input schema is the graph's state
schema); ``thread_status`` reads where a thread stands and its state values; ``pending_approvals``
lists what paused threads wait on. Runs are driven by core's SessionManager over the ``--sessions``
store exactly as ``grapharc serve`` drives them, so a run paused on an approval is decided by a
person elsewhere (the inbox, ``grapharc session approve``) and carried on from the store; deciding
is never an MCP tool. Served over stdio, or streamable HTTP on loopback (no auth on that
transport), with the ``mcp`` SDK's low-level ``Server``.
"""
