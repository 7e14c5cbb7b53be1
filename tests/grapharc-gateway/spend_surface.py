"""A planning surface whose kinds ask a gateway model several times; a test puts the model in MODELS.

``ask`` under-declares its worst case (the runtime's dollar ceiling must catch it);
``ask_big`` declares more than a small dollar budget holds (admission must refuse it).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from grapharc.planner import CostEstimate, NodeRegistry, NodeSpec

CALLS = 5
MODELS: dict[str, Any] = {}
DEFAULT_POLICY: dict[str, Any] = {
    "version": "spend-test", "description": "allow everything",
    "rules": [{"id": "nodes", "resource": "node", "action": "allow"},
              {"id": "edges", "resource": "edge", "action": "allow"}]}


class AskState(BaseModel):
    """How many calls the node made."""

    calls: int = 0


def _ask(spec: NodeSpec) -> Any:
    def body(state: AskState) -> dict[str, int]:
        for _ in range(CALLS):
            MODELS["ask"].invoke("q")
        return {"calls": CALLS}

    return body


def build_registry() -> NodeRegistry:
    """``ask`` (declared worst case $0.005) and ``ask_big`` (declared $0.05)."""
    return NodeRegistry([
        NodeSpec(name="ask", factory=_ask, worst_case=CostEstimate(tokens=500, cost_usd=0.005),
                 writes=frozenset({"calls"})),
        NodeSpec(name="ask_big", factory=_ask, worst_case=CostEstimate(tokens=500, cost_usd=0.05),
                 writes=frozenset({"calls"})),
    ])


STATE_SCHEMA = AskState
