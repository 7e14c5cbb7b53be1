"""Graphs that declare what a run's caller may set, registered with ``--registry
config_graphs:register_configured`` beside api_graphs.py's (so the graphs every other server test
sees stay as they are): ``configured``, one node that writes down the configurable keys, context,
tags and recursion limit it was run with, and ``configured-relay``, the same between two legs
around a node that waits for a release file (a worker can be killed there, and the run taken
over by another), and ``configured-ask``, the same around the credit desk's question (decided on
the inbox page, the thread is carried on by the server)."""

from __future__ import annotations

from typing import Any, Literal

from api_graphs import WaiterState, ask_the_desk, wait_for_release
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import get_runtime
from pydantic import BaseModel, Field

from grapharc.examples.approval import CREDIT_DESK
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session.approvals import Approvers

CONFIGURED = "configured"
CONFIGURED_RELAY = "configured-relay"
CONFIGURED_ASK = "configured-ask"


class Settings(BaseModel):
    """The configurable keys the graphs declare."""

    user_id: str = "anonymous"
    model: Literal["mock/echo", "mock/careful"] = "mock/echo"


class Audience(BaseModel):
    """The graphs' run context."""

    tone: Literal["plain", "formal"] = "plain"


class HeardState(GraphARCState):
    """What each hearing node was run with, one line per node run."""

    heard: list[str] = Field(default_factory=list)


class HeardRelayState(WaiterState):
    """The waiter's fields and the hearing nodes' lines."""

    heard: list[str] = Field(default_factory=list)


class HeardAskState(HeardState):
    """The hearing nodes' lines, and the credit desk's answer."""

    answer: str = ""


def hear(state: HeardState | HeardRelayState, config: RunnableConfig) -> dict[str, Any]:
    """Write down the user, model, tone, tags and recursion limit this node was run with."""
    conf, tone = config["configurable"], get_runtime().context.tone
    tags = ",".join(t for t in config.get("tags", []) if not t.startswith("graph:"))
    line = f"{conf['user_id']}|{conf['model']}|{tone}|{tags}|{config['recursion_limit']}"
    return {"heard": [*state.heard, line]}


def register_configured(manager: Any) -> None:
    """Register ``configured``, ``configured-relay`` and ``configured-ask`` on ``manager``."""
    single = GraphARC(HeardState, name=CONFIGURED, config_schema=Settings, context_schema=Audience)
    single.add_node("hear", hear, writes={"heard"})
    single.add_edge(START, "hear")
    single.add_edge("hear", END)
    manager.register(single)
    manager.register(_heard_around(HeardRelayState, CONFIGURED_RELAY, wait_for_release, "released"))
    asking = _heard_around(HeardAskState, CONFIGURED_ASK, ask_the_desk, "answer")
    manager.register(asking, approvers={"ask_the_desk": Approvers(frozenset({CREDIT_DESK}))})


def _heard_around(state: Any, name: str, middle: Any, writes: str) -> GraphARC:
    """A configured graph that hears, runs ``middle`` (writing ``writes``), then hears again."""
    graph = GraphARC(state, name=name, config_schema=Settings, context_schema=Audience)
    graph.add_node("hear_first", hear, writes={"heard"})
    graph.add_node(middle.__name__, middle, writes={writes})
    graph.add_node("hear_last", hear, writes={"heard"})
    graph.add_edge(START, "hear_first")
    graph.add_edge("hear_first", middle.__name__)
    graph.add_edge(middle.__name__, "hear_last")
    graph.add_edge("hear_last", END)
    return graph
