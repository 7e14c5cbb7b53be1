"""Governed runs: what ``plan``, ``run``, ``agent`` and ``serve`` build from resolved configuration.

:mod:`grapharc.governed.settings` resolves every command's settings one way;
:mod:`grapharc.governed.run` builds one governed run (surface, model, policy, budget, checker);
:mod:`grapharc.governed.provenance` reports where each part came from; and
:mod:`grapharc.governed.known_graphs` registers the graph of a thread another process started.
The CLI and the server are thin callers of these modules. Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **{name: "grapharc.governed.run" for name in (
        "GovernedRun", "GraphOutcome", "Planner", "UnboundedRunError", "budget_for",
        "configured_budget", "configured_trace", "governed_loop", "prepare_graph", "prepare_plan",
        "run_graph", "run_plan")},
    **{name: "grapharc.governed.settings" for name in ("BUILT_INS", "COMMANDS", "resolve_config")},
    **{name: "grapharc.governed.provenance" for name in (
        "budget_document", "policy_document", "policy_line", "provenance")},
    "register_thread_graph": "grapharc.governed.known_graphs",
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
