"""The graphs any process can carry a thread on through, without the process that started it.

A thread names its graph and nothing else, so a process that did not start it must register that
graph before it can decide the thread's approval or recover it: an agent is rebuilt from the
settings stored with its thread, and core's demo credit graph is registered by name. ``grapharc
session approve`` and the server's inbox (for a thread of a graph the server does not serve) both
carry threads on this way.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grapharc.session.manager import SessionManager


def register_thread_graph(manager: SessionManager, thread: str) -> Path | str | None:
    """Register on ``manager`` the graph ``thread`` runs: an agent rebuilt from its stored settings
    (its trace file is returned), or the graph of one of core's demos (None is returned)."""
    from grapharc.examples.approval import register_credit_graph
    from grapharc.harness.sessions import AGENT_GRAPH, reopen_agent

    if manager.get(thread).graph == AGENT_GRAPH:
        trace: Path | str = reopen_agent(manager, thread)[1]
        return trace
    register_credit_graph(manager)
    return None
