"""Graphs the API tests' server registers (``--registry api_graphs:register``): the credit demo,
a graph whose one node waits until a file the test names exists, so a run stays in flight
for as long as the test needs it to, a three-node relay whose middle node waits the same way
(a worker can be killed between its nodes), and one whose node writes a long answer and values
JSON cannot hold as they are (NaN, a set, bytes, a datetime), a meeting: a node that waits
until the nodes of as many runs as it expects are running at the same time, and a gated waiter:
the credit desk is asked first, then the node waits for its release file."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langgraph.types import interrupt
from pydantic import Field

from grapharc.examples.approval import CREDIT_DESK, register_credit_graph
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session.approvals import Approvers

WAITER = "waiter"
RELAY = "relay"
ODD = "odd-values"
MEETING = "meeting"
GATED_WAITER = "gated-waiter"
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


def register(manager: Any) -> None:
    """Register the credit demo, the waiter, the relay, the odd-values graph, the meeting and the
    gated waiter on ``manager``."""
    register_credit_graph(manager)
    waiter = GraphARC(WaiterState, name=WAITER)
    waiter.add_node("wait_for_release", wait_for_release, writes={"released"})
    waiter.add_edge(START, "wait_for_release")
    waiter.add_edge("wait_for_release", END)
    manager.register(waiter)
    relay = GraphARC(RelayState, name=RELAY)
    for name, leg in (("first_leg", first_leg), ("middle_leg", middle_leg), ("last_leg", last_leg)):
        relay.add_node(name, leg, writes={"legs", "released"})
    relay.add_edge(START, "first_leg")
    relay.add_edge("first_leg", "middle_leg")
    relay.add_edge("middle_leg", "last_leg")
    relay.add_edge("last_leg", END)
    manager.register(relay)
    odd = GraphARC(OddState, name=ODD)
    odd.add_node("answer_oddly", answer_oddly, writes={"answer", "reading", "tags", "raw", "seen_at"})
    odd.add_edge(START, "answer_oddly")
    odd.add_edge("answer_oddly", END)
    manager.register(odd)
    meeting = GraphARC(MeetingState, name=MEETING)
    meeting.add_node("meet", meet, writes={"met"})
    meeting.add_edge(START, "meet")
    meeting.add_edge("meet", END)
    manager.register(meeting)
    gated = GraphARC(GatedState, name=GATED_WAITER)
    gated.add_node("ask_the_desk", ask_the_desk, writes={"answer"})
    gated.add_node("wait_for_release", wait_for_release, writes={"released"})
    gated.add_edge(START, "ask_the_desk")
    gated.add_edge("ask_the_desk", "wait_for_release")
    gated.add_edge("wait_for_release", END)
    manager.register(gated, approvers={"ask_the_desk": Approvers(frozenset({CREDIT_DESK}))})
