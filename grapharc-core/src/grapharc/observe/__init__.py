"""Reading a run afterwards: trace, metrics, viz, replay, diff, cost and OpenTelemetry spans.

The JSONL trace is the only writer; every view here reads that one file through one
streaming reader (:mod:`grapharc.trace.reader`), so no view can disagree with the audit
trail. Names are exported lazily (PEP 562) so importing one reader costs only its module,
and nothing here needs OpenTelemetry unless spans are exported to it.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_NAMES_BY_MODULE = {
    "errors": ("TraceError", "TraceFormatError", "TraceUnreadableError", "TraceVersionError",
               "UnknownRunError", "NoEventsError", "ReducerError", "RateCardError", "GroupingError",
               "OTelUnavailableError"),
    "metrics": ("metrics", "MetricsReport"),
    "cost": ("cost", "CostReport", "RateCard", "Rate"),
    "viz": ("viz", "ExecutedPath"),
    "replay": ("replay", "ReplayStep", "ReplayResult"),
    "diff": ("diff", "RunDiff"),
    "summary": ("ThreadSummarizer", "ThreadSummary"),
    "fold": ("StateFolder", "REDUCERS"),
    "otel": ("export_spans", "SpanSink", "SpanHandle", "OpenTelemetrySink", "ExportReport"),
    "tally": ("Tally", "Usage"),
}
_EXPORTS = {name: f"{__name__}.{module}" for module, names in _NAMES_BY_MODULE.items() for name in names}
_EXPORTS.update(read_events="grapharc.trace.reader", TraceReader="grapharc.trace.reader")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
