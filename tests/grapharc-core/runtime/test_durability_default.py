"""With a checkpointer, a step's checkpoint is on disk before the next step runs."""

from __future__ import annotations

import sqlite3
import time

from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    first: str = ""
    seen_by_second: str = ""


class SlowSaver(SqliteSaver):
    """Writes checkpoints slowly, so a write still in flight is visible to the next node."""

    def put(self, *args, **kwargs):
        time.sleep(0.2)
        return super().put(*args, **kwargs)


def test_a_slow_checkpoint_write_finishes_before_the_next_node_runs(tmp_path):
    path = tmp_path / "checkpoints.db"
    saver = SlowSaver(sqlite3.connect(path, check_same_thread=False))
    config = {"configurable": {"thread_id": "t1"}}

    def first(state: State) -> dict:
        return {"first": "written"}

    def second(state: State) -> dict:
        reader = SqliteSaver(sqlite3.connect(path))
        latest = reader.get_tuple(config)
        return {"seen_by_second": latest.checkpoint["channel_values"].get("first", "")}

    graph = GraphARC(State, name="durable")
    graph.add_node("first", first, writes={"first"})
    graph.add_node("second", second, writes={"seen_by_second"})
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    out = graph.compile(checkpointer=saver).invoke({}, config)
    assert out["seen_by_second"] == "written"
