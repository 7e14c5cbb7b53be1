"""Format version 2: node lines name their run's thread and attempt by a key, and every reader
yields the events as version 1 wrote them, from version-1 and version-2 traces alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grapharc.observe.errors import TraceFormatError
from grapharc.observe.summary import ThreadSummarizer
from grapharc.trace import schema as ts
from grapharc.trace.reader import read_events
from grapharc.trace.runkeys import RUN_KEY
from grapharc.trace.writer import TraceWriter, end_fields, node_identity


def run_start(run_id: str, thread_id: str, attempt: int = 1, version: int = ts.SCHEMA_VERSION
              ) -> dict[str, Any]:
    return {ts.PHASE: ts.RUN_START, ts.RUN_ID: run_id, ts.THREAD_ID: thread_id, ts.ATTEMPT: attempt,
            ts.GRAPH: "g", ts.SCHEMA_VERSION_FIELD: version, ts.BUDGET: {}, ts.TS: 1.0}


def node_end(run_id: str, thread_id: str, step: int, attempt: int = 1) -> dict[str, Any]:
    event = node_identity(ts.END, run_id, thread_id, attempt, "g", "n", step)
    return end_fields(event, {"x": step}, 0.5, 3, None)


def raw_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_trace_of_a_version_1_and_a_version_2_run_reads_back_the_very_events_written(tmp_path):
    path = tmp_path / "t.jsonl"
    old = [run_start("r1", "thread-1", version=1), node_end("r1", "thread-1", 1)]
    path.write_text("".join(json.dumps(event) + "\n" for event in old))
    new = [run_start("r2", "thread-2"), node_identity(ts.START, "r2", "thread-2", 1, "g", "n", 1),
           node_end("r2", "thread-2", 1), {ts.PHASE: ts.RUN_END, ts.RUN_ID: "r2", ts.THREAD_ID: "thread-2",
                                          ts.ATTEMPT: 1, ts.STATUS: ts.COMPLETED, ts.TS: 2.0}]
    with TraceWriter(path) as writer:
        writer.append_many([dict(event) for event in new])
    lines = raw_lines(path)
    assert [ts.THREAD_ID in line for line in lines] == [True, True, True, False, False, True]
    assert lines[3][RUN_KEY] == lines[4][RUN_KEY] == lines[2][RUN_KEY]
    assert [list(event.items()) for event in read_events(path)] == [list(e.items()) for e in old + new]
    assert [e[ts.RUN_ID] for e in read_events(path, thread_id="thread-2", attempt=1)] == ["r2"] * 4


def test_runs_sharing_a_run_id_from_two_writers_on_one_file_keep_their_own_thread_and_attempt(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as first, TraceWriter(path) as second:  # as two processes appending
        first.append(run_start("same", "t1"))
        second.append(run_start("same", "t2", attempt=2))
        for step in (1, 2):
            first.append(node_end("same", "t1", step))
            second.append(node_end("same", "t2", step, attempt=2))
    assert all(ts.THREAD_ID not in line for line in raw_lines(path) if line[ts.PHASE] == ts.END)
    ends = [(e[ts.THREAD_ID], e[ts.ATTEMPT], e[ts.STEP]) for e in read_events(path) if e[ts.PHASE] == ts.END]
    assert ends == [("t1", 1, 1), ("t2", 2, 1), ("t1", 1, 2), ("t2", 2, 2)]
    assert [e[ts.STEP] for e in read_events(path, thread_id="t2") if e[ts.PHASE] == ts.END] == [1, 2]


def test_a_node_event_unlike_its_run_start_or_of_an_undeclared_run_is_written_whole(tmp_path):
    path = tmp_path / "t.jsonl"
    written = [node_end("early", "t", 1), run_start("r", "t"), node_end("r", "other-thread", 1),
               node_end("r", "t", 2, attempt=3), node_end("r", "t", 3)]
    with TraceWriter(path) as writer:
        writer.append_many([dict(event) for event in written])
    assert [RUN_KEY in line for line in raw_lines(path)] == [False, True, False, False, True]
    assert list(read_events(path)) == written


def test_a_keyed_line_no_earlier_run_start_declared_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as writer:
        writer.append_many([run_start("r", "t"), node_end("r", "t", 1)])
    path.write_text(path.read_text().splitlines()[1] + "\n")
    with pytest.raises(TraceFormatError, match=r":1: names run key '[^']+' of run 'r', which no earlier "
                                               r"run_start declared"):
        list(read_events(path))


def test_an_incremental_summary_remembers_run_keys_declared_before_its_offset(tmp_path):
    path = tmp_path / "t.jsonl"
    summarizer = ThreadSummarizer(path, "t")
    with TraceWriter(path) as writer:
        writer.append(run_start("r", "t"))
        assert summarizer.update().runs == ["r"]
        writer.append(node_end("r", "t", 1))
        summary = summarizer.update()
    assert (summary.node_executions, summary.tokens, summary.state) == (1, 3, {"x": 1})
