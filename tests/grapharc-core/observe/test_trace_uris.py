"""Traces named by URI: ``file:PATH`` is the file a bare path names, for writers and for every trace
command; a scheme nobody registered is one line and exit 2."""

from __future__ import annotations

import json

import pytest

from grapharc.testing.cli import run_cli
from grapharc.trace.writer import TraceWriter


@pytest.fixture
def trace(builder):
    builder.run_start("r1", thread="t").node("r1", "load", 1, thread="t", tokens=3, delta={"xs": [1]})
    return builder.run_end("r1", thread="t").write()


@pytest.mark.parametrize("command", [("trace",), ("metrics", "r1"), ("viz", "r1"), ("replay", "r1"),
                                     ("diff", "r1", "r1"), ("cost",)])
def test_every_trace_command_reads_a_file_uri_as_the_file(trace, command):
    by_path = run_cli([command[0], str(trace), *command[1:]])
    by_uri = run_cli([command[0], f"file:{trace}", *command[1:]])
    assert by_path.exit_code == 0, by_path.stderr
    assert (by_uri.exit_code, by_uri.stdout.replace(f"file:{trace}", str(trace))) == (0, by_path.stdout)


def test_a_writer_given_a_file_uri_appends_to_that_file(tmp_path):
    with TraceWriter(f"file://{tmp_path}/t.jsonl") as writer:
        writer.emit({"phase": "run_start", "run_id": "r", "thread_id": "t", "ts": 1.0})
    assert [json.loads(line)["run_id"] for line in (tmp_path / "t.jsonl").read_text().splitlines()] == ["r"]


def test_an_unknown_trace_scheme_is_one_line_and_exit_2():
    human = run_cli(["metrics", "nosuch://host/db"])
    assert human.exit_code == 2 and human.stdout == ""
    assert human.stderr.startswith("error: unknown store scheme 'nosuch'") and "Traceback" not in human.stderr
    document = json.loads(run_cli(["metrics", "nosuch://host/db", "--json"]).stdout)
    assert document["ok"] is False and "nosuch" in document["error"]["message"]
