"""Reading a run afterwards: trace, metrics, viz, replay, diff, cost and OpenTelemetry spans.

The JSONL trace is the only writer; every view here reads that one file through one
streaming reader (:mod:`grapharc.observe.reader`), so no view can disagree with the audit
trail. Names are exported lazily (PEP 562) so importing one reader costs only its module,
and nothing here needs OpenTelemetry unless spans are exported to it.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "read_events": "reader", "TraceReader": "reader",
    "TraceError": "errors", "TraceFormatError": "errors", "TraceUnreadableError": "errors",
    "TraceVersionError": "errors",
    "UnknownRunError": "errors", "NoEventsError": "errors", "ReducerError": "errors",
    "RateCardError": "errors", "GroupingError": "errors", "OTelUnavailableError": "errors",
    "metrics": "metrics", "MetricsReport": "metrics",
    "cost": "cost", "CostReport": "cost", "RateCard": "cost", "Rate": "cost",
    "viz": "viz", "ExecutedPath": "viz",
    "replay": "replay", "ReplayStep": "replay", "ReplayResult": "replay",
    "diff": "diff", "RunDiff": "diff",
    "ThreadSummarizer": "summary", "ThreadSummary": "summary",
    "StateFolder": "fold", "REDUCERS": "fold",
    "export_spans": "otel", "SpanSink": "otel", "SpanHandle": "otel", "OpenTelemetrySink": "otel",
    "ExportReport": "otel",
    "Tally": "tally", "Usage": "tally",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'grapharc.observe' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"grapharc.observe.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
