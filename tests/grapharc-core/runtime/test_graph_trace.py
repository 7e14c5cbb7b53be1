"""Node and run events on the JSONL trace, with exactly the fields the trace contract lists."""

from __future__ import annotations

import json
import operator
import re
import threading
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.fanout import WorkerOutcome
from grapharc.runtime.graph import END, START
from grapharc.trace.writer import TraceWriter

IDENTITY = {"phase", "run_id", "thread_id", "attempt", "graph", "node", "step", "ts"}


class State(GraphARCState):
    count: int = 0
    label: str = ""


class FanState(GraphARCState):
    outcomes: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def build(trace, fail: bool = False):
    def name(state: State) -> dict:
        if fail:
            raise ValueError("no name for you")
        return {"label": f"n{state.count}"}

    g = GraphARC(State, name="traced", trace=trace)
    g.add_node("count", lambda s: {"count": s.count + 1}, writes={"count"})
    g.add_node("name", name, writes={"label"})
    g.add_edge(START, "count")
    g.add_edge("count", "name")
    g.add_edge("name", END)
    return g.compile()


def test_each_node_execution_writes_start_and_end_with_exactly_the_contract_fields(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "t.jsonl"
    build(trace).invoke({}, {"configurable": {"thread_id": "thread-7"}})

    node_events = [e for e in events(trace) if e["phase"] in ("start", "end")]
    starts = [e for e in node_events if e["phase"] == "start"]
    ends = [e for e in node_events if e["phase"] == "end"]
    assert [e["node"] for e in node_events] == ["count", "count", "name", "name"]
    assert all(set(e) == IDENTITY for e in starts)
    assert all(set(e) == IDENTITY | {"state_delta", "duration_ms", "tokens", "cost_usd"} for e in ends)
    assert [e["state_delta"] for e in ends] == [{"count": 1}, {"label": "n1"}]
    assert {e["thread_id"] for e in node_events} == {"thread-7"}
    assert {e["graph"] for e in node_events} == {"traced"}
    assert {e["attempt"] for e in node_events} == {1}
    assert [e["step"] for e in starts] == [1, 2]


def test_a_failing_node_writes_an_error_event_with_duration_and_exception(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "t.jsonl"

    with pytest.raises(ValueError):
        build(trace, fail=True).invoke({})

    error = next(e for e in events(trace) if e["phase"] == "error")
    assert set(error) == IDENTITY | {"duration_ms", "exception"}
    assert error["node"] == "name"
    assert error["exception"] == {"type": "ValueError", "message": "no name for you"}


def test_a_run_is_framed_by_run_start_and_run_end_with_status_and_reason(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    graph = build(trace)
    graph.invoke({})
    with pytest.raises(ValueError):
        build(trace, fail=True).invoke({})

    framing = [e for e in events(trace) if e["phase"] in ("run_start", "run_end")]
    assert [e["phase"] for e in framing] == ["run_start", "run_end"] * 2
    first_end, second_end = framing[1], framing[3]
    assert (first_end["status"], first_end["stop_reason"]) == ("completed", "completed")
    assert (second_end["status"], second_end["stop_reason"]) == ("error", "ValueError")
    assert second_end["exception"] == {"type": "ValueError", "message": "no name for you"}
    assert first_end["iterations"] == 2


def test_every_invoke_gets_a_new_run_id_and_a_generated_thread_without_config(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "t.jsonl"
    graph = build(trace)
    graph.invoke({})
    graph.invoke({})

    starts = [e for e in events(trace) if e["phase"] == "run_start"]
    assert len({e["run_id"] for e in starts}) == 2 and len({e["thread_id"] for e in starts}) == 2
    # invented ids are 16 hex characters (64 random bits), not 36-character UUIDs on every line
    hex16 = re.compile(r"[0-9a-f]{16}")
    assert all(hex16.fullmatch(e["run_id"]) and hex16.fullmatch(e["thread_id"]) for e in starts)
    per_run = {e["run_id"] for e in events(trace) if e["phase"] in ("start", "end")}
    assert per_run == {e["run_id"] for e in starts}


def test_a_shared_trace_writer_is_used_as_given(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / "t.jsonl")
    build(writer).invoke({})
    writer.emit(dict(phase="note", text="after the run"))
    writer.close()

    kinds = [e["phase"] for e in events(tmp_path / "t.jsonl")]
    assert kinds[0] == "run_start" and kinds[-2:] == ["run_end", "note"]


def test_with_the_trace_off_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    writes: list[object] = []
    monkeypatch.setattr(TraceWriter, "append", lambda self, event: writes.append(event))

    build(None).invoke({})

    assert writes == []


def test_worker_thread_events_reach_the_file_in_order_by_run_end(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(FanState, name="fan", trace=trace)
    g.add_fanout(
        "work",
        lambda item: threading.current_thread().name,
        after=START,
        over=lambda s: range(6),
        into="outcomes",
        then=END,
    )
    g.compile().invoke({})

    recorded = events(trace)
    work = [e for e in recorded if e.get("node") == "work"]
    assert recorded[0]["phase"] == "run_start" and recorded[-1]["phase"] == "run_end"
    assert sorted(e["phase"] for e in work) == ["end"] * 6 + ["start"] * 6
    ends = [e for e in work if e["phase"] == "end"]
    assert sorted(e["state_delta"]["outcomes"][0]["index"] for e in ends) == list(range(6))


def test_a_finished_workers_events_reach_the_file_while_a_sibling_still_runs(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "t.jsonl"
    release = threading.Event()

    def worker(item: str) -> str:
        if item == "slow":
            release.wait(30)
        return item

    g = GraphARC(FanState, name="fan", trace=trace)
    g.add_fanout("work", worker, after=START, over=lambda s: ["fast", "slow"], into="outcomes", then=END)
    graph = g.compile()
    runner = threading.Thread(target=graph.invoke, args=({},))
    runner.start()
    try:
        seen_while_running = False
        for _ in range(300):  # up to ~30 s; the background flush takes a tenth of a second
            lines = trace.read_text().splitlines() if trace.exists() else []
            if any('"phase":"end"' in line and '"item":"fast"' in line for line in lines):
                seen_while_running = runner.is_alive()
                break
            release.wait(0.1)
    finally:
        release.set()
        runner.join(30)
        graph.close()

    assert seen_while_running
