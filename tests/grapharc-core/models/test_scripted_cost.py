"""The scripted model is free: its calls cost 0.0, so they are priced, never unpriced."""

from __future__ import annotations

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.runtime.graph import END, START
from grapharc.testing import ScriptedChatModel


class State(GraphARCState):
    reply: str = ""


def test_a_scripted_call_costs_nothing_and_keeps_a_dollar_ceiling() -> None:
    model = ScriptedChatModel(responses=["fine"])
    g = GraphARC(State, budget=Budget(max_cost_usd=0.01))
    g.add_node("ask", lambda s: {"reply": str(model.invoke("hi").content)}, writes={"reply"})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    compiled = g.compile()
    assert compiled.invoke({})["reply"] == "fine"
    assert (compiled.last_run.cost_usd, compiled.last_run.unpriced_calls) == (0.0, 0)
