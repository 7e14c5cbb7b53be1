"""Core's sync SQLite saver's extended capabilities on real LangGraph graphs: what ``prune`` keeps
(so a paused thread, or a paused subgraph, still resumes), what it refuses, runs deleted and
threads copied. (LangGraph's conformance suite runs them through ``test_checkpoints.py``'s kit.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.channels import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from grapharc.sqlite.saver import CHECKPOINT_COLUMNS, WRITE_COLUMNS, SqliteCheckpointSaver


class Count(TypedDict):
    n: int


def _asking(checkpointer: Any = None) -> Any:
    """Adds one, then asks how much more to add."""
    graph = StateGraph(Count)
    graph.add_node("one", lambda state: {"n": state["n"] + 1})
    graph.add_node("ask", lambda state: {"n": state["n"] + interrupt("how much more?")})
    graph.add_edge(START, "one")
    graph.add_edge("one", "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=checkpointer)


def _hosting(child: Any, saver: SqliteCheckpointSaver) -> Any:
    """Adds one, then runs ``child`` as its node ``child``."""
    graph = StateGraph(Count)
    graph.add_node("one", lambda state: {"n": state["n"] + 1})
    graph.add_node("child", child)
    graph.add_edge(START, "one")
    graph.add_edge("one", "child")
    graph.add_edge("child", END)
    return graph.compile(checkpointer=saver)


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteCheckpointSaver]:
    connection = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield SqliteCheckpointSaver(connection)
    connection.close()


def _namespaces(saver: SqliteCheckpointSaver, thread_id: str = "t") -> dict[str, int]:
    query = "SELECT checkpoint_ns, COUNT(*) FROM checkpoints WHERE thread_id = ? GROUP BY 1"
    return dict(saver.conn.execute(query, (thread_id,)).fetchall())


def _thread(thread_id: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def test_keeping_the_latest_leaves_a_paused_thread_that_resumes_with_nothing_else(saver):
    graph = _asking(saver)
    graph.invoke({"n": 0}, _thread())
    paused = graph.get_state(_thread())
    assert len(list(saver.list(_thread()))) > 1
    saver.prune(["t"])
    kept = list(saver.list(_thread()))
    assert [t.config for t in kept] == [paused.config] and kept[0].parent_config is None
    assert graph.get_state(_thread()).next == ("ask",)
    assert graph.invoke(Command(resume=10), _thread()) == {"n": 11}


def test_a_paused_subgraph_call_keeps_its_latest_checkpoint_and_resumes(saver):
    graph = _hosting(_asking(), saver)
    graph.invoke({"n": 0}, _thread())
    namespaces = _namespaces(saver)
    assert len(namespaces) == 2 and all(count > 1 for count in namespaces.values())
    saver.prune(["t"])
    assert _namespaces(saver) == dict.fromkeys(namespaces, 1)
    assert graph.invoke(Command(resume=10), _thread()) == {"n": 12}


def test_a_finished_subgraph_calls_namespace_goes_with_the_root_checkpoint_it_started_from(saver):
    graph = _hosting(_asking(), saver)
    graph.invoke({"n": 0}, _thread())
    graph.invoke(Command(resume=1), _thread())
    finished = {ns for ns in _namespaces(saver) if ns}
    graph.invoke({"n": 0}, _thread())
    current = {ns for ns in _namespaces(saver) if ns} - finished
    saver.prune(["t"])
    assert _namespaces(saver) == {"": 1, **dict.fromkeys(current, 1)}
    assert graph.invoke(Command(resume=100), _thread()) == {"n": 102}


def test_a_subgraph_with_a_checkpointer_of_its_own_keeps_its_latest_across_calls(saver):
    graph = _hosting(_asking(checkpointer=True), saver)
    graph.invoke({"n": 0}, _thread())
    graph.invoke(Command(resume=1), _thread())
    graph.invoke({"n": 0}, _thread())
    saver.prune(["t"])
    assert _namespaces(saver) == {"": 1, "child": 1}
    assert graph.invoke(Command(resume=5), _thread()) == {"n": 7}


def _appended(state: list[str], writes: list[list[str]]) -> list[str]:
    return [*state, *(item for write in writes for item in write)]


class Logged(TypedDict):
    log: Annotated[list[str], DeltaChannel(_appended, snapshot_frequency=3)]


def test_keeping_the_latest_refuses_threads_that_use_a_delta_channel_before_pruning_any(saver):
    plain = _asking(saver)
    plain.invoke({"n": 0}, _thread("plain"))
    graph = StateGraph(Logged)
    graph.add_node("a", lambda state: {"log": ["a"]})
    graph.add_node("b", lambda state: {"log": ["b"]})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    graph.compile(checkpointer=saver).invoke({"log": ["x"]}, _thread("delta"))
    before = {thread: len(list(saver.list(_thread(thread)))) for thread in ("plain", "delta")}
    with pytest.raises(NotImplementedError, match=r"DeltaChannel: delta$"):
        saver.prune(["plain", "delta"])
    assert {thread: len(list(saver.list(_thread(thread)))) for thread in ("plain", "delta")} == before
    saver.prune(["plain", "delta"], strategy="delete")
    assert _namespaces(saver, "plain") == _namespaces(saver, "delta") == {}


def test_deleting_a_run_takes_its_checkpoints_and_writes_and_orphans_its_successor(saver):
    graph = _asking(saver)
    graph.invoke({"n": 0}, {**_thread(), "metadata": {"run_id": "first"}})
    graph.invoke(Command(resume=1), {**_thread(), "metadata": {"run_id": "second"}})
    first = [t.config for t in saver.list(_thread(), filter={"run_id": "first"})]
    second = list(saver.list(_thread(), filter={"run_id": "second"}))
    assert first and second and second[-1].parent_config in first
    saver.delete_for_runs(["first"])
    assert [t.config for t in saver.list(_thread())] == [t.config for t in second]
    assert list(saver.list(_thread()))[-1].parent_config is None
    left = {row[0] for row in saver.conn.execute("SELECT checkpoint_id FROM writes").fetchall()}
    assert left <= {t.config["configurable"]["checkpoint_id"] for t in second}


def test_a_deletion_that_fails_part_way_deletes_nothing(saver):
    graph = _asking(saver)
    for thread in ("a", "b"):
        graph.invoke({"n": 0}, {**_thread(thread), "metadata": {"run_id": "doomed"}})
    saver.conn.execute("CREATE TRIGGER refuse BEFORE DELETE ON checkpoints WHEN old.thread_id = 'b' "
                       "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")
    held = {thread: len(list(saver.list(_thread(thread)))) for thread in ("a", "b")}
    with pytest.raises(sqlite3.IntegrityError, match="refused by the test"):
        saver.delete_for_runs(["doomed"])
    assert {thread: len(list(saver.list(_thread(thread)))) for thread in ("a", "b")} == held


def test_a_copied_thread_resumes_on_its_own_and_the_original_is_untouched(saver):
    graph = _asking(saver)
    graph.invoke({"n": 0}, _thread("original"))
    saver.copy_thread("original", "copy")
    assert [t.checkpoint for t in saver.list(_thread("copy"))] == \
        [t.checkpoint for t in saver.list(_thread("original"))]
    assert graph.invoke(Command(resume=10), _thread("copy")) == {"n": 11}
    assert graph.get_state(_thread("original")).next == ("ask",)
    assert graph.invoke(Command(resume=20), _thread("original")) == {"n": 21}


def test_a_single_id_string_and_an_unknown_strategy_are_refused(saver):
    with pytest.raises(TypeError, match="not a str"):
        saver.prune("t")
    with pytest.raises(TypeError, match="not a str"):
        saver.delete_for_runs("run")
    with pytest.raises(ValueError, match="Unknown prune strategy: 'oldest'"):
        saver.prune(["t"], strategy="oldest")


def test_langgraphs_tables_have_the_columns_a_copy_carries(saver):
    """``copy_thread`` names every column of LangGraph's two tables: one more would be left behind."""
    saver.setup()
    tables = {table: tuple(row[1] for row in saver.conn.execute(f"PRAGMA table_info({table})"))
              for table in ("checkpoints", "writes")}
    assert tables == {"checkpoints": CHECKPOINT_COLUMNS, "writes": WRITE_COLUMNS}, (
        f"langgraph-checkpoint-sqlite {version('langgraph-checkpoint-sqlite')} changed SqliteSaver's tables "
        f"(now {tables}), which grapharc.sqlite.saver copies column by column: adapt it")
