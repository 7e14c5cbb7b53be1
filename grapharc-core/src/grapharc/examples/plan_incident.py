"""The incident demo surface for ``grapharc plan``: four kinds, their state, writes and policy.

A registry module declares, next to its kinds, the state they share
(``STATE_SCHEMA``), what each kind may write (``WRITES``; a kind nobody
declared writes for may write nothing), its default policy, a goal check and a
scripted planner. The planner's first proposal wires the denied ``deploy``
kind, so round 1 is rejected on ``edge_denied``; round 2 is admitted and runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict

from grapharc.planner.registry import CostEstimate, NodeRegistry, NodeSpec


class IncidentState(BaseModel):
    """What the incident kinds share: the goal and a note per step that ran."""

    model_config = ConfigDict(extra="forbid")
    goal: str = ""
    notes: list[str] = []


STATE_SCHEMA = IncidentState
WRITES: dict[str, set[str]] = {"triage": {"notes"}, "patch": {"notes"}, "verify": {"notes"},
                               "deploy": {"notes"}}
DEFAULT_POLICY: dict[str, Any] = {
    "version": "plan-incident-1",
    "description": "deny -> deploy, otherwise allow",
    "rules": [
        {"id": "deny-deploy", "resource": "edge", "action": "deny", "target": "deploy",
         "reason": "deploying needs a change window and a human"},
        {"id": "allow-edges", "resource": "edge", "action": "allow",
         "reason": "the other kinds may run in any order"},
        {"id": "allow-kinds", "resource": "node", "action": "allow",
         "reason": "every incident kind may be proposed; edges decide what runs"},
    ],
}
_DESCRIPTIONS = {
    "triage": "read the alert and decide what is broken",
    "patch": "prepare a fix for what triage found",
    "verify": "check the fix against the failing signal",
    "deploy": "ship the fix to production",
}


def _factory(spec: NodeSpec) -> Callable[[IncidentState], dict[str, Any]]:
    """Every kind records that it ran; bodies come from here, never from a proposal."""

    def body(state: IncidentState) -> dict[str, Any]:
        return {"notes": [*state.notes, f"{spec.name} ran"]}

    return body


def build_registry() -> NodeRegistry:
    """The four incident kinds, frozen."""
    return NodeRegistry(
        NodeSpec(name=kind, factory=_factory, description=text,
                 worst_case=CostEstimate(tokens=0, seconds=1.0), writes=frozenset(WRITES[kind]))
        for kind, text in sorted(_DESCRIPTIONS.items())
    ).freeze()


def goal_reached(state: IncidentState) -> bool:
    """The incident is handled once a fix has been verified."""
    return "verify ran" in state.notes


def _chain(*kinds: str) -> str:
    edges = [{"source": "__start__", "target": kinds[0]}]
    edges += [{"source": a, "target": b} for a, b in pairwise(kinds)]
    return json.dumps({"nodes": [{"name": kind, "kind": kind} for kind in kinds], "edges": edges})


SCRIPT: tuple[str, ...] = (
    "Triage, then ship it:\n" + _chain("triage", "deploy"),
    "Deploy is denied, so patch and verify instead:\n" + _chain("triage", "patch", "verify"),
)


def scripted_planner() -> Any:
    """The free, deterministic planner ``grapharc plan`` uses when no --model is given."""
    from grapharc.models.scripted import ScriptedChatModel

    return ScriptedChatModel(responses=list(SCRIPT), model_name="scripted", cost_usd=0.0)
