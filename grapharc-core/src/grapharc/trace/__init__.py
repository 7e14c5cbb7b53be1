"""The trace plane: the format (one schema), the writer, the one reader, and stores by URI.

A trace is JSON Lines, one event per line, written by :class:`~grapharc.trace.writer.TraceWriter`
through a sink (a JSONL file, or a ``traces`` store a plugin adds) and read back by
:mod:`grapharc.trace.reader`, which every view in :mod:`grapharc.observe`, the server's streams
and the inbox use. Names are exported lazily, so a reader never pays for the writer's pydantic.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_NAMES_BY_MODULE = {
    "writer": ("TraceWriter", "open_trace_sink"),
    "sinks": ("TraceSink", "FileTraceSink", "check_trace_writable"),
    "store": ("TraceStore", "FileTraces", "open_traces", "trace_location"),
    "reader": ("TraceReader", "TraceScanner", "read_events"),
    "files": ("open_trace",),
    "errors": ("TraceError", "TraceClosedError", "TraceFieldError", "TraceFormatError", "TraceOpenError",
               "TraceUnreadableError", "TraceVersionError"),
}
_EXPORTS = {name: f"{__name__}.{module}" for module, names in _NAMES_BY_MODULE.items() for name in names}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
