"""The errors the views over a trace raise; each names the file (and line, run or field) at fault.

The reader's own (a trace that cannot be read, a bad line, an unknown format version) are
:mod:`grapharc.trace.errors`'; they are named here too, so a view's caller catches them in one place.
"""

from __future__ import annotations

from grapharc.trace.errors import TraceError, TraceFormatError, TraceUnreadableError, TraceVersionError

__all__ = ["GroupingError", "NoEventsError", "OTelUnavailableError", "RateCardError", "ReducerError",
           "TraceError", "TraceFormatError", "TraceUnreadableError", "TraceVersionError", "UnknownRunError"]


class UnknownRunError(TraceError):
    """No event in the trace carries the run id that was asked for."""

    def __init__(self, path: object, run_id: str) -> None:
        super().__init__(
            f"{path}: no events for run {run_id!r}",
            hint=f"list the runs it holds with: grapharc metrics {path}",
        )
        self.path = path
        self.run_id = run_id


class NoEventsError(TraceError):
    """A filter (or the whole file) matched no events."""


class ReducerError(TraceError):
    """A reducer was named that does not exist or was written in the wrong form."""


class RateCardError(TraceError):
    """A rate card file or value cannot be used to price tokens."""


class GroupingError(TraceError):
    """A --by value names no grouping this reader knows."""


class OTelUnavailableError(TraceError):
    """Span export was asked for without OpenTelemetry installed."""
