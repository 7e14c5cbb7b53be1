"""What an open approval asks about, read alike by every reader of a session store: the inbox's
approval page (grapharc-server) and ``grapharc mcp serve``'s pending approvals (grapharc-mcp).

Plugins never import each other, so the reading they share lives here.
"""

from __future__ import annotations

from typing import Any

from grapharc.session.manager import SessionManager
from grapharc.session.records import GATE, Approval, Session


def asked_about(manager: SessionManager, approval: Approval, session: Session, *,
                whole_state: bool = False) -> Any:
    """The value ``approval``'s ``interrupt()`` carries (read from the checkpoint, so without the
    graph), or what its gate's chooser picks from the thread's state (needs the graph registered
    here). A gate without a chooser asks about the whole state: its values with ``whole_state``,
    else None (for a reader that shows the state anyway)."""
    if approval.kind != GATE:
        return manager.interrupt_value(session.thread_id, approval.hold_key)
    gate = manager.graphs.get(session.graph, session.thread_id).gates.get(approval.node)
    if gate is not None and gate.arguments is not None:
        return gate.arguments(manager.values(session.thread_id))
    return manager.values(session.thread_id) if whole_state else None
