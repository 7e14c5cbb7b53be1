"""benchmarks/trace_readers.py writes the trace format its readers read, checks every command's exit
status and answer before it prints a figure, and reports each child's own peak RSS."""

from __future__ import annotations

import json

import jsonschema
import pytest
from benchmark_runs import BENCHMARKS, Sabotage, assert_refused, run_benchmark

from grapharc.trace import schema as ts

READER = "grapharc.trace.reader"


def test_its_synthetic_trace_is_the_format_the_schema_describes(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from synthetic_trace import synthesise

    runs = synthesise(tmp_path / "trace.jsonl", 3000)

    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(ts.json_schema())
    assert [error.message for event in events for error in validator.iter_errors(event)] == []
    assert len(events) == 3000 == sum(written.events for written in runs.values())
    phases = {event[ts.PHASE] for event in events}
    assert phases == {ts.RUN_START, ts.START, ts.END, ts.ERROR, ts.MODEL_CALL, ts.TOOL_CALL, ts.ADMISSION,
                      ts.RUN_END}


def test_quick_mode_prints_every_command_against_the_bare_pass() -> None:
    done = run_benchmark("trace_readers.py", "--quick")

    assert done.returncode == 0, done.stdout + done.stderr
    for command in ("bare json.loads pass", "metrics", "cost", "viz", "replay", "diff"):
        assert f"2000 {command} " in done.stdout


@pytest.mark.parametrize(("sabotage", "naming"), [
    # the reader stops at line 1, as it did when the benchmark wrote an old format: the CLI exits 2
    (Sabotage(READER, "def _refuse(self):\n    raise TraceFormatError(self.path, 1, 'is sabotaged')\n"
                      "TraceScanner.__iter__ = _refuse"), "metrics (orjson) exited 2"),
    # the reader silently drops every tenth event: the commands exit 0 with the wrong counts
    (Sabotage(READER, "_scan = TraceScanner.__iter__\n"
                      "TraceScanner.__iter__ = lambda s: (e for n, e in enumerate(_scan(s)) if n % 10)"),
     "metrics counted"),
], ids=["reader-fails", "reader-drops-events"])
def test_it_prints_no_figure_when_the_readers_fail(sabotage: Sabotage, naming: str) -> None:
    assert_refused(run_benchmark("trace_readers.py", "--quick", sabotage=sabotage), naming)


def test_the_peak_rss_is_the_childs_own_not_what_it_shared_with_its_parent(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from trace_readers import BARE, BASELINE, Job, measure

    (tmp_path / "lines.jsonl").write_text('{"a": 1}\n' * 10)
    job = Job(BASELINE, "stdlib", BARE, [str(tmp_path / "lines.jsonl")], lambda text: None)
    ballast = b"x" * (300 * 2**20)  # the parent's own pages, which a child shares until its exec

    _, peak_mb = measure(job, tmp_path)

    assert peak_mb < 100, f"{peak_mb} MB: the parent's {len(ballast) >> 20} MB counted"
