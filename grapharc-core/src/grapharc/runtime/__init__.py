"""The graph kernel: typed state, declared writes, budgets, deadlines, traces and fan-out.

Built on LangGraph; each concern lives in its own module here. The names below are
exported lazily (PEP 562), so importing one submodule does not import them all.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "GraphARC": "grapharc.runtime.graph",
    "StateGraph": "grapharc.runtime.graph",
    "START": "grapharc.runtime.graph",
    "END": "grapharc.runtime.graph",
    "CompiledGraphARC": "grapharc.runtime.compiled",
    "GraphARCState": "grapharc.runtime.state",
    "Budget": "grapharc.runtime.budget",
    "BudgetMeter": "grapharc.runtime.budget",
    "BudgetExceededError": "grapharc.runtime.budget",
    "NodeTimeoutError": "grapharc.runtime.deadline",
    "ProgressGuard": "grapharc.runtime.progress",
    "StopReason": "grapharc.runtime.progress",
    "TraceWriter": "grapharc.trace.writer",
    "WorkerOutcome": "grapharc.runtime.fanout",
    "dedupe": "grapharc.runtime.fanout",
    "unique_sources": "grapharc.runtime.fanout",
    "split_outcomes": "grapharc.runtime.fanout",
    "charge_hand": "grapharc.runtime.tokens",
    "AsyncNodeError": "grapharc.runtime.errors",
    "DagViolationError": "grapharc.runtime.errors",
    "GraphBuildError": "grapharc.runtime.errors",
    "GraphRoutingError": "grapharc.runtime.errors",
    "MissingRunContextError": "grapharc.runtime.errors",
    "MissingThreadIdError": "grapharc.runtime.errors",
    "NoCheckpointerError": "grapharc.runtime.errors",
    "NodeOutputError": "grapharc.runtime.errors",
    "RouteMappingError": "grapharc.runtime.errors",
    "RunInputError": "grapharc.runtime.errors",
    "StateTypeError": "grapharc.runtime.errors",
    "UnknownFieldError": "grapharc.runtime.errors",
    "UnknownNodeError": "grapharc.runtime.errors",
    "UnsupportedStreamError": "grapharc.runtime.errors",
    "WriteConflictError": "grapharc.runtime.errors",
    "WritePermissionError": "grapharc.runtime.errors",
}

__all__ = sorted(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
