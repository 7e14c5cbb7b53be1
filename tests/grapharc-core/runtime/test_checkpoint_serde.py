"""compile() allowlists every class the state can hold, so checkpoints read back without LangGraph's
unregistered-type warning today and without being refused under strict msgpack or its future default."""

from __future__ import annotations

import asyncio
import operator
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, NamedTuple, TypeVar

import aiosqlite
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.fanout import WorkerOutcome
from grapharc.runtime.graph import END, START
from grapharc.runtime.serde import checkpoint_allowlist
from grapharc.session.fencing import FencedSaver, Leases

STRICT = JsonPlusSerializer(allowed_msgpack_modules=None)  # LangGraph's safe types only: strict mode


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Tag(BaseModel):
    label: str
    color: Color


class Item(BaseModel):
    name: str
    tags: list[Tag] = Field(default_factory=list)


class Note(BaseModel):
    text: str


class Shard(BaseModel):
    chunk: str


class Extra(BaseModel):
    """Held in an ``Any`` field: no annotation names it, only the user's own allowlist does."""

    value: int


class Shapes(GraphARCState):
    items: list[Item] = Field(default_factory=list)
    color: Color | None = None
    by_name: dict[str, Item] = Field(default_factory=dict)
    extra: Any = None


ITEM = Item(name="a", tags=[Tag(label="x", color=Color.BLUE)])

T = TypeVar("T")


class Mode(Enum):
    FAST = "fast"


class Page(BaseModel, Generic[T]):
    entries: list[T]


class Point(NamedTuple):
    x: int
    note: Note


@dataclass
class Box:
    tag: Tag


class Tree(BaseModel):
    children: list[Tree] = Field(default_factory=list)


class Everything(GraphARCState):
    page: Page[Item] | None = None
    mode: Literal[Mode.FAST] = Mode.FAST
    point: Point | None = None
    boxes: Annotated[Sequence[Box], "metadata"] = ()
    tree: Tree = Field(default_factory=Tree)
    plain: dict[str, list[int]] = Field(default_factory=dict)


def test_the_allowlist_reaches_every_class_through_generics_literals_and_nesting() -> None:
    named = {name for _module, name in checkpoint_allowlist(Everything)}

    assert named == {"Everything", "Page[Item]", "Item", "Tag", "Color", "Mode", "Point", "Note", "Box",
                     "Tree", "WorkerOutcome"}


@pytest.fixture
def refused() -> Iterator[list[SerdeEvent]]:
    """LangGraph's serde events for classes it warned about or refused while this test read checkpoints."""
    seen: list[SerdeEvent] = []
    unregister = register_serde_event_listener(seen.append)
    yield seen
    unregister()


@pytest.fixture
def sqlite_saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


def shapes_graph(checkpointer: Any, **writes: Any) -> Any:
    graph = GraphARC(Shapes, name="shapes")
    graph.add_node("fill", lambda state: dict(writes), writes=list(writes))
    graph.add_edge(START, "fill")
    graph.add_edge("fill", END)
    return graph.compile(checkpointer=checkpointer)


def read_back(graph: Any, thread: str) -> dict[str, Any]:
    graph.invoke({}, {"configurable": {"thread_id": thread}})
    return dict(graph.get_state({"configurable": {"thread_id": thread}}).values)


def test_a_list_of_models_with_nested_models_and_enums_reads_back_as_models(sqlite_saver, refused) -> None:
    values = read_back(shapes_graph(sqlite_saver, items=[ITEM]), "t")

    assert values["items"] == [ITEM] and isinstance(values["items"][0].tags[0].color, Color)
    assert refused == []


def test_an_optional_enum_reads_back_as_the_enum_under_a_strict_serializer(tmp_path, refused) -> None:
    saver = InMemorySaver(serde=STRICT)

    values = read_back(shapes_graph(saver, color=Color.RED), "t")

    assert values["color"] is Color.RED
    assert refused == []


def test_a_dict_of_models_reads_back_as_models_under_a_strict_serializer(refused) -> None:
    values = read_back(shapes_graph(InMemorySaver(serde=STRICT), by_name={"a": ITEM}), "t")

    assert values["by_name"] == {"a": ITEM} and isinstance(values["by_name"]["a"], Item)
    assert refused == []


def test_the_users_own_allowlist_is_kept_beside_the_states(refused) -> None:
    theirs = JsonPlusSerializer(allowed_msgpack_modules=[(Extra.__module__, Extra.__name__)])
    saver = InMemorySaver(serde=theirs)

    values = read_back(shapes_graph(saver, extra=Extra(value=7), items=[ITEM]), "t")

    assert values["extra"] == Extra(value=7) and values["items"] == [ITEM]
    assert refused == []
    assert saver.serde is theirs  # the checkpointer passed in is not modified


@pytest.mark.filterwarnings("ignore:Blocked deserialization")
def test_langgraphs_allow_everything_default_reads_like_strict_mode(refused) -> None:
    values = read_back(shapes_graph(InMemorySaver(), extra=Extra(value=7), items=[ITEM]), "t")

    assert values["items"] == [ITEM]
    assert values["extra"] == {"value": 7}  # not on any list: refused, as strict mode and the future do
    assert {(e["kind"], e["name"]) for e in refused} == {("msgpack_blocked", "Extra")}


class Outer(GraphARCState):
    count: int = 0


class Inner(GraphARCState):
    count: int = 0
    notes: list[Note] = Field(default_factory=list)


def test_a_model_only_a_subgraphs_state_holds_reads_back_through_the_parents_checkpointer(
        sqlite_saver, refused) -> None:
    sub = GraphARC(Inner, name="inner")
    sub.add_node("write", lambda state: {"notes": [Note(text="kept")]}, writes=["notes"])
    sub.add_node("ask", lambda state: {"count": len(interrupt("go on?"))}, writes=["count"])
    sub.add_edge(START, "write")
    sub.add_edge("write", "ask")
    sub.add_edge("ask", END)
    parent = GraphARC(Outer, name="outer")
    parent.add_node("host", sub.compile(), writes=["count"])
    parent.add_edge(START, "host")
    parent.add_edge("host", END)
    graph = parent.compile(checkpointer=sqlite_saver)
    config = {"configurable": {"thread_id": "t"}}

    graph.invoke({}, config)
    (task,) = graph.get_state(config, subgraphs=True).tasks

    assert task.state.values["notes"] == [Note(text="kept")]
    assert refused == []


class Fanned(GraphARCState):
    outcomes: Annotated[list, operator.add] = Field(default_factory=list)  # names no WorkerOutcome
    total: int = 0


def read_shard(shard: Shard) -> int:
    return len(shard.chunk)


def test_fan_out_items_and_outcomes_read_back_though_the_state_names_neither(sqlite_saver, refused) -> None:
    graph = GraphARC(Fanned, name="fanned")
    graph.add_node("plan", lambda state: None)
    graph.add_node("sum", lambda state: {"total": sum(o.value for o in state.outcomes)}, writes=["total"])
    graph.add_fanout("read", read_shard, after="plan", into="outcomes", then="sum",
                     over=lambda state: [Shard(chunk="ab"), Shard(chunk="c")])
    graph.add_edge(START, "plan")
    graph.add_edge("sum", END)
    compiled = graph.compile(checkpointer=sqlite_saver, interrupt_before=["read", "sum"])
    config = {"configurable": {"thread_id": "t"}}

    compiled.invoke({}, config)  # paused with the Sends (and their Shards) pending
    sends = [task.name for task in compiled.get_state(config).tasks]
    compiled.invoke(None, config)  # the workers ran; paused before sum
    outcomes = compiled.get_state(config).values["outcomes"]

    assert sends == ["read", "read"]
    assert all(isinstance(outcome, WorkerOutcome) for outcome in outcomes) and len(outcomes) == 2
    assert compiled.invoke(None, config)["total"] == 3
    assert refused == []


def test_a_fenced_saver_allowlists_the_checkpointer_it_wraps(sqlite_saver, refused) -> None:
    fenced = FencedSaver(sqlite_saver, Leases(lambda lease: True))

    values = read_back(shapes_graph(fenced, items=[ITEM], color=Color.BLUE), "t")

    assert values["items"] == [ITEM] and values["color"] is Color.BLUE
    assert refused == []


def test_an_async_sqlite_saver_reads_the_state_back_without_warnings(tmp_path, refused) -> None:
    async def run() -> dict[str, Any]:
        async with aiosqlite.connect(tmp_path / "checkpoints.db") as conn:
            graph = shapes_graph(AsyncSqliteSaver(conn), items=[ITEM], color=Color.RED)
            config = {"configurable": {"thread_id": "t"}}
            await graph.ainvoke({}, config)
            return dict((await graph.aget_state(config)).values)

    values = asyncio.run(run())

    assert values["items"] == [ITEM] and values["color"] is Color.RED
    assert refused == []
