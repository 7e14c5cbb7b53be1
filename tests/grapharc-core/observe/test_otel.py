"""OpenTelemetry export against the real SDK, and import without OpenTelemetry installed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from grapharc.observe.otel import OpenTelemetrySink, export_spans


@pytest.fixture
def exporter():
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory, OpenTelemetrySink(provider.get_tracer("test"))


def agent_trace(builder):
    b = builder
    b.run_start("r", graph="agentic", tenant="acme", labels={"team": "sre"})
    b.add("model_call", "r", node=None, tokens=40, model="mock/a", duration_ms=20.0)
    b.start("r", "agent", 1, graph="agentic")
    b.add("tool_call", "r", graph="agentic", node="agent", step=1, tool="read_file", duration_ms=3.0)
    b.add("model_call", "r", graph="agentic", node="ghost", step=9, tokens=1)
    b.end("r", "agent", 1, graph="agentic", tokens=12, delta={"answer": "x"})
    b.add("admission", "r", action="decision", node=None, status="admitted")
    for _ in range(2):
        b.start("r", "worker", 2, graph="agentic")
    b.end("r", "worker", 2, graph="agentic")
    b.error("r", "worker", 2, graph="agentic", message="crashed")
    b.run_end("r", graph="agentic", status="error", stop_reason="ValueError")
    b.run_start("s", graph="other").node("s", "only", 1, graph="other")
    return b.write()


def by_name(spans):
    found = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def test_one_root_per_run_and_one_child_per_node_execution(builder, exporter):
    memory, sink = exporter
    report = export_spans(agent_trace(builder), sink)
    spans = by_name(memory.get_finished_spans())
    roots = [s for s in memory.get_finished_spans() if s.parent is None]
    assert sorted(s.name for s in roots) == ["run agentic", "run other"]
    run = spans["run agentic"][0]
    node_spans = spans["node agent"] + spans["node worker"]
    assert len(node_spans) == 3 and all(s.parent.span_id == run.context.span_id for s in node_spans)
    assert all(s.context.trace_id == run.context.trace_id for s in node_spans)
    assert report.runs == 2 and report.node_spans == 4
    assert run.attributes["grapharc.tenant"] == "acme" and run.attributes["grapharc.label.team"] == "sre"


def test_an_error_event_gives_its_node_span_an_error_status(builder, exporter):
    memory, sink = exporter
    export_spans(agent_trace(builder), sink)
    workers = by_name(memory.get_finished_spans())["node worker"]
    assert sorted(s.status.status_code.name for s in workers) == ["ERROR", "UNSET"]
    failed = next(s for s in workers if s.status.status_code == StatusCode.ERROR)
    assert "crashed" in failed.status.description
    run = by_name(memory.get_finished_spans())["run agentic"][0]
    assert run.status.status_code == StatusCode.ERROR


def test_sub_steps_are_parented_by_inference_and_unknown_parents_go_to_the_run(builder, exporter):
    memory, sink = exporter
    report = export_spans(agent_trace(builder), sink)
    spans = by_name(memory.get_finished_spans())
    run, agent = spans["run agentic"][0], spans["node agent"][0]
    tool = spans["tool_call"][0]
    assert tool.parent.span_id == agent.context.span_id
    calls = {s.attributes.get("grapharc.node", None): s for s in spans["model_call"]}
    assert calls[None].parent.span_id == run.context.span_id  # outside any node
    assert calls["ghost"].parent.span_id == run.context.span_id  # no such open node: not a guess
    assert report.parented_to_run == 2 and report.substep_spans == 3
    assert calls[None].end_time - calls[None].start_time == pytest.approx(20_000_000, rel=1e-3)


def test_admission_events_become_events_on_the_run_span(builder, exporter):
    memory, sink = exporter
    export_spans(agent_trace(builder), sink)
    run = by_name(memory.get_finished_spans())["run agentic"][0]
    assert [e.name for e in run.events] == ["admission.decision"]
    assert run.events[0].attributes["grapharc.status"] == "admitted"


def test_span_times_come_from_the_trace(builder, exporter):
    memory, sink = exporter
    builder.run_start("r").node("r", "a", 1).run_end("r")
    export_spans(builder.write(), sink)
    node = by_name(memory.get_finished_spans())["node a"][0]
    start, end = (e["ts"] for e in builder.events[1:3])
    assert node.start_time == int(start * 1e9) and node.end_time == int(end * 1e9)


def test_a_node_still_running_is_ended_with_an_error_at_the_runs_last_event(builder, exporter):
    memory, sink = exporter
    builder.run_start("r").start("r", "hung", 1)
    export_spans(builder.write(), sink)
    hung = by_name(memory.get_finished_spans())["node hung"][0]
    assert hung.status.status_code == StatusCode.ERROR and hung.end_time is not None


def test_a_closing_event_without_its_start_becomes_a_span_of_its_duration(builder, exporter):
    memory, sink = exporter
    builder.run_start("r").error("r", "lost", 1, duration_ms=40.0).run_end("r", status="budget_exceeded")
    export_spans(builder.write(), sink)
    spans = by_name(memory.get_finished_spans())
    lost = spans["node lost"][0]
    assert lost.end_time - lost.start_time == pytest.approx(40_000_000, rel=1e-3)
    assert lost.status.status_code == StatusCode.ERROR
    assert spans["run g"][0].status.status_code == StatusCode.ERROR


def test_only_the_named_run_is_exported(builder, exporter):
    memory, sink = exporter
    export_spans(agent_trace(builder), sink, run_id="s")
    assert sorted(s.name for s in memory.get_finished_spans()) == ["node only", "run other"]


def test_observe_imports_and_exports_to_a_sink_without_opentelemetry(builder):
    path = builder.run_start("r").node("r", "a", 1).run_end("r").write()
    probe = f"""
import json, sys
sys.modules["opentelemetry"] = None
import grapharc.observe
from grapharc.observe import OTelUnavailableError, export_spans, metrics

class Span:
    def __init__(self, log, name): self.log, self.name = log, name
    def set_attributes(self, attributes): pass
    def set_error(self, description): self.log.append(("error", self.name))
    def add_event(self, name, attributes, timestamp_ns): pass
    def end(self, end_time_ns): self.log.append(("end", self.name))

class Sink:
    def __init__(self): self.log = []
    def start_span(self, name, *, parent, start_time_ns, attributes):
        self.log.append(("start", name, parent.name if parent else None))
        return Span(self.log, name)

sink = Sink()
export_spans({str(path)!r}, sink)
try:
    export_spans({str(path)!r})
    missing = "no error"
except OTelUnavailableError as exc:
    missing = str(exc)
loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m] is not None)
print(json.dumps({{"log": sink.log, "missing": missing, "loaded": loaded,
                  "tokens": metrics({str(path)!r}, "r").to_document()["tokens"]["total"]}}))
"""
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["log"] == [["start", "run g", None], ["start", "node a", "run g"], ["end", "node a"],
                              ["end", "run g"]]
    assert "opentelemetry-sdk" in outcome["missing"] and outcome["loaded"] == []
    assert outcome["tokens"] == 0
