"""Trace continuity across attempts on one thread, derived from real SQLite checkpoints."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import interrupt

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.graph import END, START

GRAPH_SOURCE = textwrap.dedent(
    """
    import os
    from pathlib import Path

    from grapharc import GraphARC, GraphARCState
    from grapharc.runtime.graph import END, START


    class State(GraphARCState):
        text: str = ""
        words: list[str] = []
        count: int = 0
        report: str = ""


    def build(trace, checkpointer, failure):
        def report(state):
            if failure.exists():
                mode = failure.read_text()
                if mode == "kill":
                    os._exit(3)
                raise RuntimeError("injected failure before the rename")
            return {"report": f"{state.count} words"}

        g = GraphARC(State, name="stage", dag=True, trace=trace)
        g.add_node("load", lambda s: {"text": "a b c"}, writes={"text"})
        g.add_node("split", lambda s: {"words": s.text.split()}, writes={"words"})
        g.add_node("count", lambda s: {"count": len(s.words)}, writes={"count"})
        g.add_node("report", report, writes={"report"})
        g.add_edge(START, "load")
        g.add_edge("load", "split")
        g.add_edge("split", "count")
        g.add_edge("count", "report")
        g.add_edge("report", END)
        return g.compile(checkpointer=checkpointer)
    """
)


def load_graph_module(tmp_path: Path) -> dict:
    source = tmp_path / "stage_graph.py"
    source.write_text(GRAPH_SOURCE)
    namespace: dict = {"__name__": "stage_graph"}
    exec(compile(GRAPH_SOURCE, str(source), "exec"), namespace)
    return namespace


def saver(path: Path) -> SqliteSaver:
    return SqliteSaver(sqlite3.connect(str(path), check_same_thread=False))


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def node_steps(trace: Path, attempt: int) -> list[int]:
    return [
        e["step"]
        for e in events(trace)
        if e["phase"] in ("start", "end", "error") and e["attempt"] == attempt
    ]


CONFIG = {"configurable": {"thread_id": "stage-thread"}}


def test_a_resumed_thread_is_the_next_attempt_and_its_steps_continue_above_the_last(
    tmp_path: Path,
) -> None:
    module = load_graph_module(tmp_path)
    trace, db, failure = tmp_path / "t.jsonl", tmp_path / "cp.sqlite", tmp_path / "fail"
    failure.write_text("raise")

    with pytest.raises(RuntimeError, match="injected failure"):
        module["build"](trace, saver(db), failure).invoke({}, CONFIG)
    failure.unlink()
    result = module["build"](trace, saver(db), failure).invoke(None, CONFIG)

    assert result["report"] == "3 words"
    first, second = node_steps(trace, 1), node_steps(trace, 2)
    assert first and second
    assert min(second) > max(first)
    resumed = [e for e in events(trace) if e["attempt"] == 2 and e["phase"] == "start"]
    assert [e["node"] for e in resumed] == ["report"]
    assert min(second) == max(first) + 1


def run_killed(tmp_path: Path, durability: str) -> tuple[dict, Path, Path, Path]:
    """Run the stage graph in a separate process that dies (os._exit) inside ``report``."""
    module = load_graph_module(tmp_path)
    trace, db, failure = tmp_path / "t.jsonl", tmp_path / "cp.sqlite", tmp_path / "fail"
    failure.write_text("kill")
    script = tmp_path / "run_once.py"
    script.write_text(
        "import sqlite3, sys\n"
        "from pathlib import Path\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from stage_graph import build\n"
        "from langgraph.checkpoint.sqlite import SqliteSaver\n"
        "saver = SqliteSaver(sqlite3.connect(sys.argv[3], check_same_thread=False))\n"
        "build(Path(sys.argv[2]), saver, Path(sys.argv[4])).invoke("
        f"{{}}, {{'configurable': {{'thread_id': 'stage-thread'}}}}, durability={durability!r})\n"
    )
    killed = subprocess.run([sys.executable, str(script), str(tmp_path), str(trace), str(db), str(failure)],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == 3, killed.stderr
    failure.unlink()
    return module, trace, db, failure


def test_a_killed_process_leaves_a_thread_whose_next_attempt_still_steps_above_it(
    tmp_path: Path,
) -> None:
    module, trace, db, failure = run_killed(tmp_path, "sync")
    result = module["build"](trace, saver(db), failure).invoke(None, CONFIG)

    assert result["report"] == "3 words"
    assert [e["phase"] for e in events(trace) if e["attempt"] == 1][-1] == "start"
    assert min(node_steps(trace, 2)) == max(node_steps(trace, 1)) + 1  # continues, no jump


def test_a_killed_run_without_sync_durability_is_still_stepped_above_never_overlapped(
    tmp_path: Path,
) -> None:
    module, trace, db, failure = run_killed(tmp_path, "async")

    module["build"](trace, saver(db), failure).invoke(None, CONFIG)

    # LangGraph may not have saved the last checkpoints, so the next attempt starts above the
    # killed run's ceiling: a jump, never an overlap
    assert min(node_steps(trace, 2)) > max(node_steps(trace, 1)) + 1


def test_an_interrupt_is_resumed_through_resume_with_the_value_and_nothing_else(
    tmp_path: Path,
) -> None:
    class Approval(GraphARCState):
        draft: str = ""
        approved_by: str = ""

    def approve(state: Approval) -> dict:
        return {"approved_by": interrupt({"draft": state.draft})}

    trace = tmp_path / "t.jsonl"
    g = GraphARC(Approval, name="approval", trace=trace)
    g.add_node("draft", lambda s: {"draft": "v1"}, writes={"draft"})
    g.add_node("approve", approve, writes={"approved_by"})
    g.add_edge(START, "draft")
    g.add_edge("draft", "approve")
    g.add_edge("approve", END)
    graph = g.compile(checkpointer=saver(tmp_path / "cp.sqlite"))

    paused = graph.invoke({}, CONFIG)
    assert paused["__interrupt__"][0].value == {"draft": "v1"}
    assert graph.get_state(CONFIG).next == ("approve",)
    done = graph.resume("alice", config=CONFIG)

    assert done["approved_by"] == "alice"
    run_ends = [e for e in events(trace) if e["phase"] == "run_end"]
    assert [(e["attempt"], e["status"]) for e in run_ends] == [(1, "interrupted"), (2, "completed")]
    assert min(node_steps(trace, 2)) > max(node_steps(trace, 1))
    interrupted = [e for e in events(trace) if e["phase"] == "interrupt"]
    assert [e["node"] for e in interrupted] == ["approve"]


def test_an_update_between_attempts_keeps_the_attempt_count_and_the_step_floor(
    tmp_path: Path,
) -> None:
    module = load_graph_module(tmp_path)
    trace, db, failure = tmp_path / "t.jsonl", tmp_path / "cp.sqlite", tmp_path / "fail"
    failure.write_text("raise")
    with pytest.raises(RuntimeError):
        module["build"](trace, saver(db), failure).invoke({}, CONFIG)

    failure.unlink()
    graph = module["build"](trace, saver(db), failure)
    graph.update_state(CONFIG, {"count": 7}, as_node="count")
    result = graph.invoke(None, CONFIG)

    assert result["report"] == "7 words"
    assert min(node_steps(trace, 2)) > max(node_steps(trace, 1))
    assert {e["attempt"] for e in events(trace)} == {1, 2}


def test_without_a_checkpointer_every_run_is_a_first_attempt(tmp_path: Path) -> None:
    module = load_graph_module(tmp_path)
    trace = tmp_path / "t.jsonl"
    graph = module["build"](trace, None, tmp_path / "absent")

    graph.invoke({})
    graph.invoke({})

    assert {e["attempt"] for e in events(trace)} == {1}


def test_the_async_entry_points_carry_attempts_and_steps_through_an_async_saver(
    tmp_path: Path,
) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    class Flow(GraphARCState):
        first: str = ""
        second: str = ""

    failing = [True]

    async def second(state: Flow) -> dict:
        if failing[0]:
            raise RuntimeError("second fails once")
        return {"second": "done"}

    trace = tmp_path / "t.jsonl"

    async def attempt(input_: dict | None) -> dict:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as cp:
            g = GraphARC(Flow, name="aflow", trace=trace)
            g.add_node("first", lambda s: {"first": "done"}, writes={"first"})
            g.add_node("second", second, writes={"second"})
            g.add_edge(START, "first")
            g.add_edge("first", "second")
            g.add_edge("second", END)
            return await g.compile(checkpointer=cp).ainvoke(input_, CONFIG)

    with pytest.raises(RuntimeError):
        asyncio.run(attempt({}))
    failing[0] = False
    result = asyncio.run(attempt(None))

    assert result["second"] == "done"
    assert min(node_steps(trace, 2)) == max(node_steps(trace, 1)) + 1
