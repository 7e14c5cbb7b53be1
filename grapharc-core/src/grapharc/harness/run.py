"""Running an agent once, to its end, in this process.

No checkpoint is kept, so nothing can pause: an ``ask`` that no approver answers is refused
with the reason and the model is told (run it in a session to make asks durable approvals,
``grapharc.harness.sessions``). ``on_update(node, writes)`` sees each node's writes as they
happen, so a caller can show the tool calls live; one that raises is dropped, not the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from grapharc.decisions.approval import Approver
from grapharc.harness.agent import Evidence
from grapharc.harness.setup import AgentSettings, build_agent
from grapharc.session.subscribers import GuardedSubscriber, OnUpdate


def run_agent(settings: AgentSettings, *, trace: Path | str, thread_id: str,
              on_update: OnUpdate | None = None,
              model: Any = None, approver: Approver | None = None,
              evidence: Evidence | None = None) -> dict[str, Any]:
    """Run the agent ``settings`` describe (``model``, ``approver`` and ``evidence`` as for
    ``build_agent``); its final state values."""
    graph = build_agent(settings, model=model, approver=approver, evidence=evidence).graph()
    graph.trace = trace
    compiled = graph.compile()
    values: dict[str, Any] = {}
    subscriber = GuardedSubscriber(on_update, thread_id)
    try:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        modes = ["updates", "values"]
        for mode, chunk in compiled.stream({"task": settings.task}, config, stream_mode=modes):
            if mode == "values":
                values = dict(chunk)
            else:
                subscriber.show(chunk)
    finally:
        compiled.close()
    return values
