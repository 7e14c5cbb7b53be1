"""A governed plan: a planner's proposal refused with its reason, then one admitted and run.

The planner (a scripted chat model, so the run is free and the same every time) first
proposes a plan ending in ``drop_database``, which the edge policy denies: the
``AdmissionChecker`` refuses it and nothing of it runs. The second proposal, ending in
``restart``, is admitted, built from the registry's own factories and executed.

Run it from the repository root after ``make install``:

    .venv/bin/python examples/governed_plan.py
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    CostEstimate,
    EdgePolicy,
    EdgeRule,
    GovernedLoop,
    LoopLimits,
    Materializer,
    NodeRegistry,
    NodeSpec,
    PlannerNode,
)
from grapharc.runtime.budget import Budget
from grapharc.testing import ScriptedChatModel


class Incident(BaseModel):
    """What the admitted plan works on."""

    cause: str = ""
    fixed: bool = False


BODIES: dict[str, Any] = {
    "inspect": lambda state: {"cause": "stale cache"},
    "restart": lambda state: {"fixed": True},
    "drop_database": lambda state: {"fixed": True},
}


def build(spec: NodeSpec, args: Any = None) -> Any:
    """A node's body comes from the registry, never from the proposal."""
    return BODIES[spec.name]


def proposal(last: str) -> str:
    """The planner's JSON for the plan ``inspect -> last``."""
    return json.dumps({"nodes": [{"name": "inspect"}, {"name": last}],
                       "edges": [{"source": "__start__", "target": "inspect"},
                                 {"source": "inspect", "target": last}]})


def main() -> None:
    """Run the governed loop and print each round's admission decision."""
    registry = NodeRegistry([
        NodeSpec(name="inspect", factory=build, worst_case=CostEstimate(tokens=300)),
        NodeSpec(name="restart", factory=build, worst_case=CostEstimate(tokens=100)),
        NodeSpec(name="drop_database", factory=build),
    ]).freeze()
    policy = EdgePolicy(rules=(
        EdgeRule(action=Decision.DENY, target="drop_database"),
        EdgeRule(action=Decision.ALLOW),
    ))
    planner = ScriptedChatModel(responses=[proposal("drop_database"), proposal("restart")])
    loop = GovernedLoop(
        planner=PlannerNode(planner, catalog=registry.catalog()),
        checker=AdmissionChecker(registry=registry, edge_policy=policy),
        materializer=Materializer(registry=registry, state_schema=Incident,
                                  writes={"inspect": {"cause"}, "restart": {"fixed"},
                                          "drop_database": {"fixed"}}),
        budget=Budget(max_tokens=50_000),
        limits=LoopLimits(max_rounds=4),
        goal_reached=lambda state: state.fixed,
    )
    result = loop.run("the checkout page is slow", Incident())
    for record in result.rounds:
        print(f"round {record.round}: {record.admission.status.value}, executed={record.executed}")
    for rejection in result.rejections():
        print(f"refused: {rejection.code} at {rejection.location}: {rejection.message}")
    print("stopped:", result.stop.value)
    print("state:", result.state)


if __name__ == "__main__":
    main()
