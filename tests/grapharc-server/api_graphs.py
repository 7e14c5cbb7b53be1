"""Graphs the API tests' server registers (``--registry api_graphs:register``): the credit demo,
a graph whose one node waits until a file the test names exists, so a run stays in flight
for as long as the test needs it to, a three-node relay whose middle node waits the same way
(a worker can be killed between its nodes), and one whose node writes a long answer and values
JSON cannot hold as they are (NaN, a set, bytes, a datetime), a meeting: a node that waits
until the nodes of as many runs as it expects are running at the same time, and a gated waiter:
the credit desk is asked first, then the node waits for its release file; plain interrupts:
one node asking with a dict, and two nodes asking at once (a list, a number); a steered graph
whose first node asks where to go next (a client's goto and update are checked against it). A
chat: its node asks a scripted chat model (which streams its reply word by word) and writes
custom stream events; with a release file it answers twice, waiting for the file in between. A
delegating chat: its node runs a plain LangGraph subgraph whose node asks the model. A failing
graph whose node raises when its input says so, a graph with a required state field, and one whose
node writes an object JSON cannot hold."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import StateGraph
from langgraph.types import interrupt
from pydantic import Field

from grapharc.examples.approval import CREDIT_DESK, register_credit_graph
from grapharc.models.scripted import ScriptedChatModel
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session.approvals import Approvers

WAITER = "waiter"
RELAY = "relay"
ODD = "odd-values"
MEETING = "meeting"
GATED_WAITER = "gated-waiter"
CHAT = "chat"
DELEGATING_CHAT = "delegating-chat"
CHAT_ANSWER = "Tokens arrive one word at a time, in order, and join into this very answer."
SECOND_ANSWER = "And after the release file, a second answer streams the same way."
PLAIN = "plain-interrupt"
PLAIN_PAIR = "plain-pair"
STEER = "steer"
PLAIN_QUESTION = {"topic": "lunch", "options": ["soup", 2.5, None], "nested": {"deep": [True, {"x": 1}]}}
FAILING = "failing"
REQUIRED = "required-field"
OPAQUE = "opaque-value"
MEETING_PATIENCE_SECONDS = 30  # how long a meeting node waits for the others before it gives up
LONG_ANSWER = "".join(f"{i:04d}é " for i in range(600))  # 3,600 characters, not all ASCII


class WaiterState(GraphARCState):
    """Where the release file is, and whether the node saw it."""

    release_file: str = ""
    released: bool = False


def wait_for_release(state: WaiterState) -> dict[str, Any]:
    while not Path(state.release_file).exists():
        time.sleep(0.05)
    return {"released": True}


class RelayState(WaiterState):
    """The waiter's fields, and which legs of the relay ran."""

    legs: list[str] = Field(default_factory=list)


def first_leg(state: RelayState) -> dict[str, Any]:
    return {"legs": [*state.legs, "first"]}


def middle_leg(state: RelayState) -> dict[str, Any]:
    wait_for_release(state)
    return {"legs": [*state.legs, "middle"]}


def last_leg(state: RelayState) -> dict[str, Any]:
    return {"legs": [*state.legs, "last"], "released": True}


class OddState(GraphARCState):
    """A long answer and values JSON has no word for."""

    answer: str = ""
    reading: float = 0.0
    tags: set[str] = Field(default_factory=set)
    raw: bytes = b""
    seen_at: datetime | None = None


def answer_oddly(state: OddState) -> dict[str, Any]:
    return {"answer": LONG_ANSWER, "reading": math.nan, "tags": {"b", "a"}, "raw": b"\x00\xffok",
            "seen_at": datetime(2026, 12, 1, 15, 0, tzinfo=UTC)}


class MeetingState(GraphARCState):
    """Where the runs sign in, how many the node waits for, and whether they all came."""

    room: str = ""
    expected: int = 0
    met: bool = False


def meet(state: MeetingState) -> dict[str, Any]:
    """Sign in to the room, then wait (at most MEETING_PATIENCE_SECONDS) until ``expected`` runs
    have; only runs whose nodes hold a thread at the same time can all meet."""
    room = Path(state.room)
    (room / f"{time.monotonic_ns()}-{id(state)}").touch()
    give_up = time.monotonic() + MEETING_PATIENCE_SECONDS
    while len(list(room.iterdir())) < state.expected and time.monotonic() < give_up:
        time.sleep(0.05)
    return {"met": len(list(room.iterdir())) >= state.expected}


class GatedState(WaiterState):
    """The waiter's fields, and the credit desk's answer."""

    answer: str = ""


def ask_the_desk(state: GatedState) -> dict[str, Any]:
    return {"answer": interrupt("may the waiter go on?")}


class ChatState(WaiterState):
    """The waiter's fields (a release file makes the chat answer twice), the question, the replies."""

    question: str = ""
    messages: list[AnyMessage] = Field(default_factory=list)
    answer: str = ""


def chat_model() -> ScriptedChatModel:
    """The scripted model of the chats: ``CHAT_ANSWER``, then ``SECOND_ANSWER``, in turn."""
    return ScriptedChatModel(model_name="api-chat", responses=[CHAT_ANSWER, SECOND_ANSWER], cycle=True)


def chat(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
    """Ask the model (custom events around it); with a release file, wait for it and ask again."""
    writer, model = get_stream_writer(), chat_model()
    writer({"step": "asking", "question": state.question})
    replies = [model.invoke([HumanMessage(state.question)], config)]
    if state.release_file:
        wait_for_release(state)
        replies.append(model.invoke([HumanMessage(state.question), replies[0]], config))
    writer({"step": "answered"})
    return {"messages": [*state.messages, *replies], "answer": str(replies[-1].content), "released": True}


class AskState(TypedDict, total=False):
    """The delegating chat's subgraph: the question and the model's reply."""

    question: str
    reply: AIMessage


def ask(inner: AskState, config: RunnableConfig) -> AskState:
    return {"reply": chat_model().invoke([HumanMessage(inner["question"])], config)}


def delegate(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
    """Run a plain LangGraph subgraph whose one node asks the model."""
    sub = StateGraph(AskState)
    sub.add_node("ask", ask)
    sub.add_edge("__start__", "ask")
    done = sub.compile().invoke({"question": state.question}, config)
    reply: AIMessage = done["reply"]
    return {"messages": [*state.messages, reply], "answer": str(reply.content)}


class PlainState(GraphARCState):
    """What the plain interrupts were answered with."""

    reply: Any = None
    left: Any = None
    right: Any = None


def ask_plainly(state: PlainState) -> dict[str, Any]:
    return {"reply": interrupt(PLAIN_QUESTION)}


def ask_left(state: PlainState) -> dict[str, Any]:
    return {"left": interrupt(["left?", 1])}


def ask_right(state: PlainState) -> dict[str, Any]:
    return {"right": interrupt(7)}


def register_plain(manager: Any) -> None:
    """A node asking one plain ``interrupt()`` with a dict, and two nodes asking at once."""
    register_one_node(manager, PLAIN, PlainState, ask_plainly, {"reply"})
    pair = GraphARC(PlainState, name=PLAIN_PAIR)
    pair.add_node("ask_left", ask_left, writes={"left"})
    pair.add_node("ask_right", ask_right, writes={"right"})
    for node in ("ask_left", "ask_right"):
        pair.add_edge(START, node)
        pair.add_edge(node, END)
    manager.register(pair)


class SteerState(GraphARCState):
    """The way picked, a note, and which way the thread went."""

    picked: Any = None
    note: str = ""
    went_left: bool = False
    went_right: bool = False


def pick(state: SteerState) -> dict[str, Any]:
    return {"picked": interrupt({"pick": ["left", "right"]})}


def picked_way(state: SteerState) -> str:
    return "left" if state.picked == "left" else "right"


def go_left(state: SteerState) -> dict[str, Any]:
    return {"went_left": True}


def go_right(state: SteerState) -> dict[str, Any]:
    return {"went_right": True}


def register_steer(manager: Any) -> None:
    """``pick`` (it may write ``picked`` and ``note``) asks which way, then routes to ``left`` or
    ``right``."""
    steer = GraphARC(SteerState, name=STEER)
    steer.add_node("pick", pick, writes={"picked", "note"})
    steer.add_node("left", go_left, writes={"went_left"})
    steer.add_node("right", go_right, writes={"went_right"})
    steer.add_edge(START, "pick")
    steer.add_conditional_edges("pick", picked_way, ["left", "right"])
    steer.add_edge("left", END)
    steer.add_edge("right", END)
    manager.register(steer)


class FailingState(GraphARCState):
    """Whether the node should raise, and what it saw when it did not."""

    fail: bool = True
    done: bool = False


class LedgerError(RuntimeError):
    """What the failing graph's node raises."""


def fail_maybe(state: FailingState) -> dict[str, Any]:
    if state.fail:
        raise LedgerError("the ledger is closed")
    return {"done": True}


class RequiredState(GraphARCState):
    """A field every start must give (it has no default), and the node's echo of it."""

    customer: str
    echoed: str = ""


def echo_customer(state: RequiredState) -> dict[str, Any]:
    return {"echoed": state.customer}


class Opaque:
    """An object of the test's own, which neither JSON nor LangGraph's serializer can hold."""


class OpaqueState(GraphARCState):
    """A field of any type, which the node fills with an ``Opaque`` when the input asks it to."""

    opaque: bool = True
    payload: Any = None


def write_opaque(state: OpaqueState) -> dict[str, Any]:
    return {"payload": Opaque() if state.opaque else "plain"}


def register(manager: Any) -> None:
    """Register the credit demo, the waiter, the relay, the odd-values graph, the meeting, the
    gated waiter, the plain interrupts, the steered graph, the chats, the failing graph, the
    required-field graph and the opaque-value graph on ``manager``."""
    register_credit_graph(manager)
    register_one_node(manager, WAITER, WaiterState, wait_for_release, {"released"})
    relay = GraphARC(RelayState, name=RELAY)
    for name, leg in (("first_leg", first_leg), ("middle_leg", middle_leg), ("last_leg", last_leg)):
        relay.add_node(name, leg, writes={"legs", "released"})
    relay.add_edge(START, "first_leg")
    relay.add_edge("first_leg", "middle_leg")
    relay.add_edge("middle_leg", "last_leg")
    relay.add_edge("last_leg", END)
    manager.register(relay)
    register_one_node(manager, ODD, OddState, answer_oddly, {"answer", "reading", "tags", "raw", "seen_at"})
    register_one_node(manager, MEETING, MeetingState, meet, {"met"})
    register_ask_then_wait(manager, GATED_WAITER, GatedState, ask_the_desk, "answer",
                           Approvers(frozenset({CREDIT_DESK})))
    register_one_node(manager, CHAT, ChatState, chat, {"messages", "answer", "released"})
    register_one_node(manager, DELEGATING_CHAT, ChatState, delegate, {"messages", "answer"})
    register_plain(manager)
    register_steer(manager)
    register_one_node(manager, FAILING, FailingState, fail_maybe, {"done"})
    register_one_node(manager, REQUIRED, RequiredState, echo_customer, {"echoed"})
    register_one_node(manager, OPAQUE, OpaqueState, write_opaque, {"payload"})


def register_one_node(manager: Any, name: str, state: type[GraphARCState], node: Any,
                       writes: set[str]) -> None:
    """Register graph ``name``: START -> ``node`` (writing ``writes``) -> END."""
    graph = GraphARC(state, name=name)
    graph.add_node(node.__name__, node, writes=writes)
    graph.add_edge(START, node.__name__)
    graph.add_edge(node.__name__, END)
    manager.register(graph)


def register_ask_then_wait(manager: Any, name: str, state: type[GraphARCState], asker: Any, field: str,
                           approvers: Approvers | None = None) -> None:
    """Register graph ``name``: START -> ``asker`` (writing ``field``, its node decided by
    ``approvers`` if given) -> the waiter -> END."""
    graph = GraphARC(state, name=name)
    graph.add_node(asker.__name__, asker, writes={field})
    graph.add_node("wait_for_release", wait_for_release, writes={"released"})
    graph.add_edge(START, asker.__name__)
    graph.add_edge(asker.__name__, "wait_for_release")
    graph.add_edge("wait_for_release", END)
    manager.register(graph, approvers={asker.__name__: approvers} if approvers is not None else None)


def registered_names() -> list[str]:
    """The names of the graphs ``register`` registers, sorted: what the server's assistants are."""
    names: list[str] = []

    class Recorder:
        def register(self, graph: GraphARC, **_options: Any) -> None:
            names.append(graph.name)

    register(Recorder())
    return sorted(names)
