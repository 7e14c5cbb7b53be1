"""Agents as durable sessions: an ask pauses the thread, a decision from any process resumes it.

The session's graph is the AgentNode's loop (graph ``agent``). Its settings (and where its
trace goes) are stored with the thread, as an ``agent_settings`` event in the session store
(the agent graph has no inbox, so the event is kept, never delivered), which is how a later
process rebuilds the very same agent — model, tools, policy, executor, limits — before it
answers an approval and continues. Nothing of the agent is alive between the pause and the
decision.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.harness.setup import AgentSettings, build_agent
from grapharc.session.records import Session
from grapharc.trace.store import trace_location

AGENT_GRAPH = "agent"
SETTINGS_EVENT = "agent_settings"


class AgentSessionError(GraphARCError):
    """A session that is not an agent's, or whose stored agent settings are missing."""


def register_agent(manager: Any, settings: AgentSettings, trace: Path | str) -> None:
    """Make the agent ``settings`` describe drivable by ``manager`` (as graph ``agent``)."""
    graph = build_agent(settings, name=AGENT_GRAPH).graph()
    graph.trace = trace
    manager.register(graph, outcome=lambda values: str(values.get("stop_reason") or ""))


def start_agent_session(manager: Any, settings: AgentSettings, *, trace: Path | str,
                        thread_id: str | None = None, on_update: Any = None) -> Session:
    """Create an agent thread, store its settings with it, and run its first turn."""
    register_agent(manager, settings, trace)
    session = manager.create(AGENT_GRAPH, thread_id=thread_id)
    manager.post_event(session.thread_id, SETTINGS_EVENT,
                       {"settings": json.loads(settings.to_json()), "trace": str(trace)})
    result: Session = manager.run(session.thread_id, {"task": settings.task}, on_update=on_update)
    return result


def stored_agent(manager: Any, thread_id: str) -> tuple[AgentSettings, Path | str]:
    """The settings and trace path stored with ``thread_id`` when its agent started."""
    session = manager.get(thread_id)
    if session.graph != AGENT_GRAPH:
        raise AgentSessionError(f"thread {thread_id} runs graph {session.graph!r}, not an agent")
    stored = [event.payload for event in manager.events(thread_id) if event.kind == SETTINGS_EVENT]
    if not stored or not isinstance(stored[0].get("settings"), dict) or not stored[0].get("trace"):
        raise AgentSessionError(f"thread {thread_id} holds no agent settings to rebuild its agent from",
                                hint="start agent sessions with grapharc agent --sessions DIR")
    return AgentSettings.from_json(json.dumps(stored[0]["settings"])), trace_location(stored[0]["trace"])


def reopen_agent(manager: Any, thread_id: str) -> tuple[AgentSettings, Path | str]:
    """Rebuild and register the agent of ``thread_id`` from its stored settings."""
    settings, trace = stored_agent(manager, thread_id)
    register_agent(manager, settings, trace)
    return settings, trace
