"""replay: node sequence, folded state, timing and failures, reconstructed without running anything."""

from __future__ import annotations

import pytest

from grapharc.observe.errors import ReducerError, UnknownRunError
from grapharc.observe.fold import parse_reducer_options
from grapharc.observe.replay import replay
from grapharc.trace.writer import TraceWriter


def replayed(path, run="r", **kwargs):
    steps = []
    result = replay(path, run, on_step=steps.append, **kwargs)
    return steps, result.to_document()


def test_the_sequence_state_timing_and_failures_are_rebuilt(builder):
    builder.run_start("r").node("r", "load", 1, delta={"items": [1, 2]}, duration_ms=3.0, tokens=4)
    builder.start("r", "count", 2).error("r", "count", 2, message="bad item", duration_ms=1.0)
    builder.start("r", "count", 2).end("r", "count", 2, delta={"total": 2}, duration_ms=2.0)
    builder.run_end("r")
    steps, summary = replayed(builder.write())
    assert [(s.node, s.status, s.step) for s in steps] == [("load", "ok", 1), ("count", "error", 2),
                                                            ("count", "ok", 2)]
    assert steps[1].exception == {"type": "ValueError", "message": "bad item"}
    assert steps[0].writes == ["items"] and steps[0].tokens == 4
    assert steps[0].started_at is not None and steps[0].duration_ms == 3.0
    assert summary["state"] == {"items": [1, 2], "total": 2}
    assert summary["failures"] == 1 and summary["steps_total"] == 3 and summary["status"] == "completed"
    assert summary["timing"]["nodes_ms"] == 6.0 and summary["timing"]["wall_ms"] > 0


def test_a_field_folds_last_write_wins_unless_a_reducer_is_named(builder):
    builder.run_start("r")
    for step, item in enumerate(["a", "b", "c"], start=1):
        builder.node("r", "worker", step, delta={"found": [item], "seen": step, "meta": {item: step}})
    path = builder.write()
    assert replayed(path)[1]["state"] == {"found": ["c"], "seen": 3, "meta": {"c": 3}}
    state = replayed(path, reducers={"found": "append", "seen": "add", "meta": "merge"})[1]["state"]
    assert state == {"found": ["a", "b", "c"], "seen": 6, "meta": {"a": 1, "b": 2, "c": 3}}


def test_a_python_reducer_can_be_passed(builder):
    builder.run_start("r").node("r", "a", 1, delta={"best": 3}).node("r", "a", 2, delta={"best": 1})
    def best(old, new):
        return new if old is None else max(old, new)

    assert replayed(builder.write(), reducers={"best": best})[1]["state"] == {"best": 3}


def test_a_started_node_with_no_end_replays_as_unfinished(builder):
    builder.run_start("r").node("r", "a", 1).start("r", "b", 2)
    steps, summary = replayed(builder.write())
    assert [(s.node, s.status) for s in steps] == [("a", "ok"), ("b", "unfinished")]
    assert summary["status"] == "incomplete" and summary["unfinished"] == 1


def test_fan_out_workers_sharing_a_step_each_keep_their_start_time(builder):
    builder.run_start("r")
    for _ in range(3):
        builder.start("r", "worker", 1)
    for _ in range(3):
        builder.end("r", "worker", 1, delta={"out": ["x"]})
    steps, _ = replayed(builder.write())
    assert len(steps) == 3 and all(s.started_at is not None for s in steps)
    assert len({s.started_at for s in steps}) == 3


def test_truncated_strings_and_values_json_cannot_hold_are_flagged(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as writer:
        writer.emit(dict(phase="run_start", run_id="r", thread_id="t", attempt=1, graph="g"))
        writer.start("r", "t", 1, "g", "write", 1)
        writer.end("r", "t", 1, "g", "write", 1, state_delta={"report": "x" * 3000, "handle": object(),
                                                      "short": "ok"},
                   duration_ms=1.0, tokens=0, cost_usd=None)
    _, summary = replayed(path)
    assert summary["truncated_fields"] == ["report"] and summary["opaque_fields"] == ["handle"]
    assert len(summary["state"]["report"]) == 2000 + len("…[truncated]")


def test_admission_events_are_not_steps_and_do_not_fold(builder):
    builder.run_start("r").add("admission", "r", action="round", node="gate", step=1, state_delta={"x": 1})
    builder.node("r", "a", 1, delta={"y": 2})
    steps, summary = replayed(builder.write())
    assert [s.node for s in steps] == ["a"] and summary["state"] == {"y": 2}


def test_an_unknown_run_is_reported(builder):
    with pytest.raises(UnknownRunError):
        replay(builder.run_start("r").write(), "x")


@pytest.mark.parametrize("option", ["messages", "=append", "messages=", "messages=prepend"])
def test_a_malformed_or_unknown_reducer_option_is_refused(option):
    with pytest.raises(ReducerError):
        parse_reducer_options([option])


def test_reducer_options_parse_into_names():
    assert parse_reducer_options(["a=append", " b = add "]) == {"a": "append", "b": "add"}
