"""The planner: a chat model asked for a proposal, and a reply read without trusting its prose.

The reply is read with :func:`grapharc.models.replies.extract_json` (longest parse
from any opener), so a bracket in prose (``see note [1]``) cannot stand in for the
proposal that follows it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from grapharc.models.replies import NoJSONError, extract_json
from grapharc.planner.proposal import ProposalError, Subgraph, proposal_from_data

INSTRUCTIONS = """\
You are the planner of a governed graph runtime. Propose the next subgraph to run toward the goal.
Reply with one JSON object: {"nodes": [{"name": <identifier>, "kind": <kind>, "args": {...}}],
"edges": [{"source": "__start__" | <name>, "target": <name> | "__end__"}], "rationale": <text>}.
Use only the kinds listed; give args only to kinds that declare an args_schema. A deterministic
checker admits or rejects the proposal; if it was rejected you are told every reason. Never repeat
a rejected proposal."""


@dataclass(frozen=True)
class Plan:
    """One planning call: the proposal (or why there is none), the raw reply, its tokens and price.

    ``cost_usd`` is what the provider reported for the call, or None when it reported none.
    """

    proposal: Subgraph | None
    raw: str
    tokens: int
    error: str = ""
    cost_usd: float | None = None


def _usage(reply: Any) -> int:
    usage = getattr(reply, "usage_metadata", None) or {}
    total = usage.get("total_tokens")
    if total is None:
        total = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
    return int(total)


class PlannerNode:
    """Asks ``model`` for a proposal given the goal, the catalog, the state and the last feedback."""

    def __init__(self, model: Any, catalog: list[dict[str, Any]], *,
                 instructions: str = INSTRUCTIONS) -> None:
        self.model = model
        self.catalog = catalog
        self.instructions = instructions

    def prompt(self, goal: str, state: BaseModel | None, feedback: str) -> str:
        """The whole message the model sees; the catalog never includes factories."""
        parts = [self.instructions, f"Goal: {goal}",
                 "Kinds:\n" + json.dumps(self.catalog, indent=1, sort_keys=True)]
        if state is not None:
            parts.append("State:\n" + state.model_dump_json())
        if feedback:
            parts.append("Feedback on your last proposal:\n" + feedback)
        return "\n\n".join(parts)

    def propose(self, goal: str, state: BaseModel | None = None, feedback: str = "") -> Plan:
        """Call the model once and read a proposal from its reply (never raising on bad replies)."""
        from langchain_core.messages import HumanMessage

        from grapharc.runtime.tokens import reported_cost

        reply = self.model.invoke([HumanMessage(content=self.prompt(goal, state, feedback))])
        raw = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        tokens = _usage(reply)
        cost = reported_cost((getattr(reply, "response_metadata", None) or {}).get("cost_usd"))
        try:
            return Plan(proposal_from_data(extract_json(raw), "model reply"), raw, tokens,
                        cost_usd=cost)
        except (NoJSONError, ProposalError) as exc:
            return Plan(None, raw, tokens, str(exc), cost)
