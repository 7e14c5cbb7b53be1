"""Graphs the session tests drive, importable by the tests and by the processes they start.

Every node calls ``visit(name)``: with ``GRAPHARC_TEST_MARKS`` set it appends a line to
``MARKS/name`` (a side effect that survives the process), and with
``GRAPHARC_TEST_BLOCK_AT=name`` it writes the pid to ``GRAPHARC_TEST_READY`` and waits
until killed (or until the file ``GRAPHARC_TEST_RELEASE`` appears): a deterministic point
for a SIGKILL or a SIGSTOP.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import os
import time
from pathlib import Path
from typing import Annotated, Any

from langgraph.types import interrupt
from pydantic import BaseModel, Field

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.harness.permissions import Decision
from grapharc.planner import (
    AdmissionChecker,
    EdgePolicy,
    EdgeRule,
    GovernedLoop,
    LoopLimits,
    Materializer,
    NodePolicy,
    NodeRegistry,
    NodeRule,
    NodeSpec,
    PlannerNode,
)
from grapharc.runtime.graph import END, START
from grapharc.session import Approvers, Gate
from grapharc.testing import ScriptedChatModel
from grapharc.trace.writer import TraceWriter

SPEND_CEILING = 100
"""The token budget of the ``spender`` graph: each of its two model calls costs about 90."""


def visit(name: str) -> None:
    marks = os.environ.get("GRAPHARC_TEST_MARKS")
    if marks:
        with open(Path(marks) / name, "a") as handle:
            handle.write(f"{os.getpid()}\n")
    if os.environ.get("GRAPHARC_TEST_BLOCK_AT") == name:
        Path(os.environ["GRAPHARC_TEST_READY"]).write_text(str(os.getpid()))
        release = Path(os.environ.get("GRAPHARC_TEST_RELEASE", "/nonexistent/never"))
        while not release.exists():
            time.sleep(0.01)


def visits(marks: Path, name: str) -> int:
    path = marks / name
    return len(path.read_text().splitlines()) if path.exists() else 0


class Ledger(GraphARCState):
    log: Annotated[list[str], operator.add] = Field(default_factory=list)
    amount: int = 0
    answer: str = ""
    inbox: Annotated[list[dict[str, Any]], operator.add] = Field(default_factory=list)


def _step(name: str, **writes: Any) -> Any:
    def node(state: Ledger) -> dict[str, Any]:
        visit(name)
        return {"log": [name], **writes}

    node.__name__ = name
    return node


def ask(state: Ledger) -> dict[str, Any]:
    visit("ask:above")  # a side effect above the interrupt: the trap
    answer = interrupt(f"pay {state.amount}?")
    visit("ask:below")
    return {"answer": answer, "log": [f"ask:{answer}"]}


def interview() -> GraphARC:
    """prepare -> ask (interrupt) -> pay."""
    g = GraphARC(Ledger, name="interview")
    g.add_node("prepare", _step("prepare", amount=120), writes={"log", "amount"})
    g.add_node("ask", ask, writes={"answer", "log"})
    g.add_node("pay", _step("pay"), writes={"log"})
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "ask")
    g.add_edge("ask", "pay")
    g.add_edge("pay", END)
    return g


def gated() -> GraphARC:
    """prepare -> (wire, ship) in parallel, each held by a gate."""
    g = GraphARC(Ledger, name="gated")
    g.add_node("prepare", _step("prepare", amount=75), writes={"log", "amount"})
    g.add_node("wire", _step("wire"), writes={"log"})
    g.add_node("ship", _step("ship"), writes={"log"})
    g.add_edge(START, "prepare")
    g.add_edge("prepare", "wire")
    g.add_edge("prepare", "ship")
    g.add_edge("wire", END)
    g.add_edge("ship", END)
    return g


def chain() -> GraphARC:
    """n1 -> n2 -> n3 -> n4, each a visit; with an inbox for posted events."""
    g = GraphARC(Ledger, name="chain")
    names = ["n1", "n2", "n3", "n4"]
    for name in names:
        g.add_node(name, _step(name), writes={"log"})
    g.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], END)
    return g


class Crowd:
    """Lets a test hold many async sessions inside one node at once."""

    arrived = 0
    release: asyncio.Event | None = None


async def gather(state: Ledger) -> dict[str, Any]:
    Crowd.arrived += 1
    assert Crowd.release is not None
    await Crowd.release.wait()
    return {"log": ["gather"]}


async def aask(state: Ledger) -> dict[str, Any]:
    answer = interrupt("carry on?")
    return {"answer": answer, "log": [f"aask:{answer}"]}


def crowd() -> GraphARC:
    """gather (async, waits for a release) -> aask (interrupt)."""
    g = GraphARC(Ledger, name="crowd")
    g.add_node("gather", gather, writes={"log"})
    g.add_node("aask", aask, writes={"answer", "log"})
    g.add_edge(START, "gather")
    g.add_edge("gather", "aask")
    g.add_edge("aask", END)
    return g


def _spend(name: str) -> Any:
    """A node that calls a scripted model: about 90 tokens, counted by the run's meter."""
    model = ScriptedChatModel(responses=["word " * 70], cycle=True)

    def node(state: Ledger) -> dict[str, Any]:
        visit(name)
        model.invoke(f"{name} the letter")
        return {"log": [name]}

    node.__name__ = name
    return node


def spender(name: str) -> GraphARC:
    """draft (~90 tokens) -> send (~90 tokens), under a 100-token budget."""
    g = GraphARC(Ledger, name=name, budget=Budget(max_tokens=SPEND_CEILING))
    g.add_node("draft", _spend("draft"), writes={"log"})
    g.add_node("send", _spend("send"), writes={"log"})
    g.add_edge(START, "draft")
    g.add_edge("draft", "send")
    g.add_edge("send", END)
    return g


class Release(BaseModel):
    """What the governed release loop's admitted nodes write."""

    tested: str = ""
    deployed: str = ""


def _release_factory(spec: Any) -> Any:
    def body(state: Release) -> dict[str, Any]:
        visit(spec.name)
        return {"tested": "ok"} if spec.name == "test" else {"deployed": "v2"}

    return body


RELEASE_PLAN = ('{"nodes": [{"name": "t", "kind": "test"}, {"name": "d", "kind": "deploy"}], '
                '"edges": [{"source": "__start__", "target": "t"}, {"source": "t", "target": "d"}]}')


def release_loop() -> GovernedLoop:
    """A governed loop whose planner proposes test -> deploy; the policy asks before any deploy."""
    registry = NodeRegistry([NodeSpec(name="test", factory=_release_factory),
                             NodeSpec(name="deploy", factory=_release_factory)]).freeze()
    trace = os.environ.get("GRAPHARC_TEST_TRACE")
    return GovernedLoop(
        planner=PlannerNode(ScriptedChatModel(responses=[RELEASE_PLAN], cycle=True),
                            catalog=registry.catalog()),
        checker=AdmissionChecker(
            registry, EdgePolicy(rules=(EdgeRule(action=Decision.ALLOW),)),
            node_policy=NodePolicy(rules=(
                NodeRule(action=Decision.ASK, kind="deploy", id="deploys-need-a-person",
                         reason="a deploy cannot be undone"),
                NodeRule(action=Decision.ALLOW)))),
        materializer=Materializer(registry, Release, {"test": {"tested"}, "deploy": {"deployed"}},
                                  trace=TraceWriter(trace) if trace else None),
        budget=Budget(max_tokens=100_000), limits=LoopLimits(max_rounds=3),
        goal_reached=lambda state: bool(state.deployed))


def amount_of(values: dict[str, Any]) -> dict[str, Any]:
    return {"amount": values.get("amount")}


def register_all(manager: Any, *, deciders: frozenset[str] = frozenset(), ttl: float | None = None) -> None:
    """Register every test graph on ``manager``."""
    approvers = Approvers(deciders, ttl)
    manager.register(interview(), approvers={"ask": approvers},
                     outcome=lambda values: ",".join(values["log"]))
    manager.register(gated(), gates={
        "wire": Gate(lambda v: f"wire {v['amount']}?", approvers, amount_of),
        "ship": Gate("ship the parcel?", approvers, amount_of),
    })
    manager.register(chain(), inbox="inbox")
    manager.register(crowd())
    manager.register(spender("spender"), gates={"send": Gate("send the letter?", approvers)})
    manager.register(spender("spender-ungated"))
    manager.register(release_loop().graph("release"), approvers={"round": approvers})
