"""Trace stores by URI: where runs' trace lines are written, and where they are read back from.

``file:PATH`` (and a bare path) is a JSONL file, core's default; grapharc-postgres adds
``postgresql://HOST/DB``, an events table several workers share. A store hands a sink to
``TraceWriter`` (the encoding stays the writer's, so every store holds the same bytes per
event) and streams those lines back to the one reader (:mod:`grapharc.trace.reader`), so every
parser, validator and error message is shared by all stores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from grapharc.trace.files import open_trace
from grapharc.trace.sinks import FileTraceSink, TraceSink


class TraceStore(Protocol):
    """A ``traces`` store: a sink for writers, and the stored lines for readers."""

    name: str
    """What messages call the store (a file's path, a database URI without its password)."""

    def open_sink(self) -> TraceSink:
        """A sink a ``TraceWriter`` appends to; the caller closes it."""

    def lines(self, *, run_id: str | None = None,
              thread_id: str | None = None) -> AbstractContextManager[Iterable[bytes]]:
        """The stored lines in write order, each ending in a newline, as a file yields them. A store
        may leave out lines of other runs or threads than those named (the reader filters anyway)."""


class FileTraces:
    """A JSONL trace file: the lines are the file's own."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(self.path)

    def open_sink(self) -> TraceSink:
        return FileTraceSink(self.path)

    def lines(self, *, run_id: str | None = None,
              thread_id: str | None = None) -> AbstractContextManager[Iterable[bytes]]:
        return open_trace(self.path)


def open_file_traces(location: str, kind: str = "traces") -> FileTraces:
    """The store-hook factory behind ``file:PATH``."""
    return FileTraces(location)


def open_traces(location: str | os.PathLike[str]) -> TraceStore:
    """The store ``location`` names: a ``traces`` store URI, or else a JSONL file at that path."""
    from grapharc.stores.uris import is_uri, open_store

    if is_uri(location):
        store: TraceStore = open_store(str(location), kind="traces")
        return store
    return FileTraces(location)


def trace_name(location: str | os.PathLike[str]) -> str:
    """How messages and documents name a trace: a file's path, or a store URI with its credentials
    masked (``grapharc.stores.masking``)."""
    from grapharc.stores.masking import masked
    from grapharc.stores.uris import is_uri

    return masked(str(location)) if is_uri(location) else str(location)


def trace_location(location: str | os.PathLike[str]) -> str | Path:
    """``location`` as readers and messages name it: a URI as given, else a ``Path``."""
    from grapharc.stores.uris import is_uri

    return str(location) if is_uri(location) else Path(location)
