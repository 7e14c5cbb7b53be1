"""The incremental thread summary folds only appended bytes and equals a fold from scratch."""

from __future__ import annotations

import itertools
import json

import pytest

from grapharc.observe.errors import TraceError, TraceFormatError
from grapharc.observe.summary import ThreadSummarizer


def thread_events(builder):
    b = builder
    b.run_start("r1", thread="t").node("r1", "a", 1, thread="t", tokens=3, delta={"log": ["one"]})
    b.add("model_call", "r1", thread="t", node=None, tokens=10, cost_usd=0.01)
    b.run_start("x", thread="other").node("x", "a", 1, thread="other", tokens=99)
    b.start("r1", "b", 2, thread="t").error("r1", "b", 2, thread="t")
    b.run_end("r1", thread="t", status="error", stop_reason="ValueError")
    b.run_start("r2", thread="t", attempt=2).node("r2", "b", 3, thread="t", attempt=2, tokens=4,
                                                  delta={"log": ["two"], "done": True})
    b.run_end("r2", thread="t", attempt=2)
    return ["".join(json.dumps(e) + "\n") for e in b.events]


def test_folding_in_rounds_equals_one_fold_of_the_whole_file(builder, tmp_path):
    lines = thread_events(builder)
    text = "".join(lines)
    path = tmp_path / "t.jsonl"
    path.write_text("")
    incremental = ThreadSummarizer(path, "t", reducers={"log": "append"})
    cuts = [0, 3, len(lines[0]) + 17, len(text) // 2, len(text) // 2 + 1, len(text) - 5, len(text)]
    for low, high in itertools.pairwise(cuts):  # some rounds end mid-line
        with open(path, "a") as handle:
            handle.write(text[low:high])
        incremental.update()
    whole = ThreadSummarizer(path, "t", reducers={"log": "append"}).update()
    assert incremental.summary() == whole
    assert whole.runs == ["r1", "r2"] and whole.attempts == [1, 2]
    assert whole.tokens == 17 and whole.outside_node_tokens == 10
    assert whole.failed == 1 and whole.node_executions == 3 and whole.status == "completed"
    assert whole.state == {"log": ["one", "two"], "done": True} and whole.last_step == 3


def test_an_unfinished_last_line_is_not_consumed_until_it_is_complete(builder, tmp_path):
    line = thread_events(builder)[0]
    path = tmp_path / "t.jsonl"
    path.write_text(line[:20])
    summarizer = ThreadSummarizer(path, "t")
    assert summarizer.update().events == 0 and summarizer.offset == 0
    with open(path, "a") as handle:
        handle.write(line[20:])
    assert summarizer.update().events == 1 and summarizer.offset == len(line.encode())


def test_bytes_already_folded_are_never_read_again(builder, tmp_path):
    lines = thread_events(builder)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines[:3]))
    summarizer = ThreadSummarizer(path, "t")
    first = summarizer.update()
    with open(path, "r+") as handle:  # corrupt what was read: a re-read would fail
        handle.write("#" * len(lines[0]))
    with open(path, "a") as handle:
        handle.write("".join(lines[3:]))
    assert summarizer.update().events > first.events


def test_a_malformed_line_is_reported_with_its_line_number_every_time(builder, tmp_path):
    lines = thread_events(builder)
    path = tmp_path / "t.jsonl"
    path.write_text(lines[0] + "not json\n" + lines[1])
    summarizer = ThreadSummarizer(path, "t")
    for _ in range(2):
        with pytest.raises(TraceFormatError, match=":2: is not valid JSON"):
            summarizer.update()
    assert summarizer.summary().events == 1


def test_a_trace_that_shrank_is_refused(builder, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(thread_events(builder)))
    summarizer = ThreadSummarizer(path, "t")
    summarizer.update()
    path.write_text("")
    with pytest.raises(TraceError, match="shrank to 0 bytes"):
        summarizer.update()


def test_the_state_in_a_summary_is_a_snapshot(builder, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(thread_events(builder)))
    summarizer = ThreadSummarizer(path, "t", reducers={"log": "append"})
    summary = summarizer.update()
    summary.state["log"].append("tampered")
    assert summarizer.summary().state["log"] == ["one", "two"]
