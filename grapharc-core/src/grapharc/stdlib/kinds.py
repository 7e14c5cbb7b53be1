"""The stdlib kinds' bodies: deterministic steps over one shared state shape.

Each body reads the goal and what earlier steps recorded, and writes only the
fields listed in :data:`STDLIB_WRITES`; none calls a model or a tool, so they
cost nothing and any plan made of them can be replayed exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grapharc.planner.registry import CostEstimate, NodeSpec

DENIED_BY_DEFAULT = frozenset({"apply_change"})

STDLIB_WRITES: dict[str, frozenset[str]] = {
    "collect_context": frozenset({"context"}),
    "investigate": frozenset({"findings"}),
    "verify": frozenset({"verified"}),
    "summarize": frozenset({"summary"}),
    "apply_change": frozenset({"changes"}),
}


def _state_model() -> type:
    """Build the Pydantic state model on first use (keeps this module import-light)."""
    from pydantic import BaseModel, ConfigDict

    class StdlibState(BaseModel):
        """The state every stdlib kind reads and writes."""

        model_config = ConfigDict(extra="forbid")
        goal: str = ""
        context: list[str] = []
        findings: list[str] = []
        verified: bool = False
        summary: str = ""
        changes: list[str] = []

    return StdlibState


def __getattr__(name: str) -> Any:
    if name == "StdlibState":
        model = _state_model()
        globals()[name] = model
        return model
    raise AttributeError(name)


def collect_context(state: Any) -> dict[str, Any]:
    """Record what the run is about before anything investigates it."""
    return {"context": [*state.context, f"goal: {state.goal}"]}


def investigate(state: Any) -> dict[str, Any]:
    """Record one finding per piece of context gathered so far."""
    found = [f"examined {item}" for item in state.context] or [f"examined goal {state.goal!r}"]
    return {"findings": [*state.findings, *found]}


def verify(state: Any) -> dict[str, Any]:
    """A run is verified only when it has findings to show for itself."""
    return {"verified": bool(state.findings)}


def summarize(state: Any) -> dict[str, Any]:
    """Condense the findings into one line, saying whether they were verified."""
    status = "verified" if state.verified else "unverified"
    return {"summary": f"{len(state.findings)} finding(s), {status}: " + "; ".join(state.findings)}


def apply_change(state: Any) -> dict[str, Any]:
    """Record the change the summary calls for (denied unless a policy allows it)."""
    return {"changes": [*state.changes, f"apply: {state.summary or state.goal}"]}


_BODIES: dict[str, tuple[Callable[[Any], dict[str, Any]], str]] = {
    "collect_context": (collect_context, "gather what the goal refers to"),
    "investigate": (investigate, "examine the gathered context and record findings"),
    "verify": (verify, "check there are findings to stand on"),
    "summarize": (summarize, "condense findings into a summary"),
    "apply_change": (apply_change, "act on the summary (denied by default)"),
}


def _factory(kind: str) -> Callable[..., Callable[[Any], dict[str, Any]]]:
    body = _BODIES[kind][0]

    def factory(*_: Any, **__: Any) -> Callable[[Any], dict[str, Any]]:
        return body

    factory.__name__ = f"{kind}_factory"
    return factory


def stdlib_specs() -> list[NodeSpec]:
    """The five stdlib ``NodeSpec``s, in the order a planner should consider them."""
    return [
        NodeSpec(name=kind, factory=_factory(kind), description=description,
                 worst_case=CostEstimate(tokens=0, seconds=1.0), writes=STDLIB_WRITES[kind])
        for kind, (_, description) in _BODIES.items()
    ]


DEFAULT_POLICY: dict[str, Any] = {
    "version": "stdlib-1",
    "description": "deny -> apply_change, otherwise allow",
    "rules": [
        {"id": "stdlib-deny-apply-change", "resource": "node", "action": "deny",
         "kind": "apply_change", "reason": "apply_change acts on the world; allow it explicitly"},
        {"id": "stdlib-allow-rest", "resource": "node", "action": "allow",
         "reason": "the other stdlib kinds only read and record"},
        {"id": "stdlib-allow-edges", "resource": "edge", "action": "allow",
         "reason": "any order of permitted kinds is fine"},
    ],
}
