"""The errors of the trace plane: writing a trace, and reading one back.

Each names the file (and line, run or field) at fault.
"""

from __future__ import annotations

from grapharc.errors import GraphARCError
from grapharc.trace.schema import SUPPORTED_VERSIONS


class TraceClosedError(GraphARCError):
    """An event was written to a trace writer after it was closed."""


class TraceFieldError(GraphARCError):
    """An extra field would overwrite one of the fields the trace contract defines."""


class TraceOpenError(GraphARCError):
    """The trace file cannot be opened or appended to (a directory, a device, /proc, no space...)."""

    hint = "name a regular file in a directory you can write, e.g. --trace runs/trace.jsonl"


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
