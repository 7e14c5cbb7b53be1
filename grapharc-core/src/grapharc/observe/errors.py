"""The errors the trace readers raise; each names the file (and line, run or field) at fault."""

from __future__ import annotations

from grapharc.errors import GraphARCError
from grapharc.trace_schema import SUPPORTED_VERSIONS


class TraceError(GraphARCError):
    """A trace could not be read or did not contain what was asked for."""


class TraceUnreadableError(TraceError):
    """The trace path is missing, a directory, unreadable or not a text file."""


class TraceFormatError(TraceError):
    """A line of the trace is not a JSON event (and is not a torn line a crash left behind)."""

    def __init__(self, path: object, line: int, problem: str) -> None:
        super().__init__(
            f"{path}:{line}: {problem}",
            hint="a trace holds one JSON object per line; fix or remove that line",
        )
        self.path = path
        self.line = line


class TraceVersionError(TraceError):
    """A run in the trace was written in a format version this reader does not know."""

    def __init__(self, path: object, line: int, version: object) -> None:
        known = ", ".join(str(v) for v in sorted(SUPPORTED_VERSIONS))
        super().__init__(
            f"{path}:{line}: written in trace format version {version!r}; this GraphARC reads {known}",
            hint="read it with the GraphARC version that wrote it, or upgrade GraphARC",
        )
        self.path = path
        self.line = line
        self.version = version


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
