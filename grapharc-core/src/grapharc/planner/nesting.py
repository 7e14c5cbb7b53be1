"""How deeply the running code is nested inside admitted graphs, kept by the runtime itself.

Every body a ``Materializer`` builds runs as many levels deeper than the code
that invoked the graph as the body's scope is nested (1 at the top), recorded
in a ContextVar (so it follows LangGraph's worker threads and asyncio tasks).
``AdmissionChecker`` reads the depth from here rather than from its caller,
so a planner inside an admitted node cannot claim depth 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEPTH: ContextVar[int] = ContextVar("grapharc_admitted_depth", default=0)


def current_depth() -> int:
    """How many admitted graphs enclose the code running now (0 outside any)."""
    return _DEPTH.get()


@contextmanager
def deeper(levels: int = 1) -> Iterator[int]:
    """Run the enclosed code ``levels`` admitted levels deeper than the current code."""
    token = _DEPTH.set(_DEPTH.get() + levels)
    try:
        yield _DEPTH.get()
    finally:
        _DEPTH.reset(token)
