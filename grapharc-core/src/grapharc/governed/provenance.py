"""Where a governed run's policy and every setting came from, as ``plan``, ``run`` and ``serve`` report it.

One block for every entry point, so the CLI's ``--json``, its human lines and the server's start-up
announcement name the same sources in the same words.
"""

from __future__ import annotations

from typing import Any

from grapharc.config.settings import Config
from grapharc.governed.run import GovernedRun
from grapharc.policy.engine import PolicyEngine
from grapharc.policy.files import LoadedPolicy
from grapharc.runtime.budget import Budget


def policy_line(loaded: LoadedPolicy, engine: PolicyEngine) -> str:
    """``origin [default] (summary)  [source]``: the provenance is always on the line."""
    default = " default" if loaded.source == "registry-default" else ""
    return f"{loaded.origin}{default} ({engine.summary()})  [{loaded.source}]"


def policy_document(loaded: LoadedPolicy, engine: PolicyEngine) -> dict[str, Any]:
    """The policy's source, origin, version and digest, for ``--json``."""
    return {"source": loaded.source, "origin": loaded.origin, "version": engine.version,
            "digest": engine.digest, "description": engine.description,
            "generated_now": loaded.generated_now}


def provenance(governed: GovernedRun) -> dict[str, Any]:
    """Where the policy and every setting came from: the same block in ``plan``, ``run`` and ``serve``."""
    return {"policy": policy_document(governed.policy, governed.engine),
            "policy_line": policy_line(governed.policy, governed.engine),
            "policy_note": governed.engine.scope_note(),
            "policy_source": governed.policy.source,
            **config_provenance(governed.config)}


def config_provenance(config: Config) -> dict[str, Any]:
    """The config file read (its human line) and, per setting with a value, the layer that set it."""
    return {"config": {"path": str(config.path) if config.path else None, "line": config.line()},
            "sources": config.sources()}


def settings_provenance(config: Config, loaded: LoadedPolicy | None) -> dict[str, Any]:
    """``config_provenance`` plus the policy a command without a governed run (``agent``) uses:
    its source and origin, or ``None`` for the built-in permissions."""
    policy = {"source": loaded.source, "origin": loaded.origin, "digest": loaded.digest} if loaded else None
    return {"policy_source": loaded.source if loaded else "built-in", "policy": policy,
            **config_provenance(config)}


def budget_document(budget: Budget) -> dict[str, Any]:
    """Every ceiling of ``budget`` (None where unset)."""
    return {"max_tokens": budget.max_tokens, "max_iterations": budget.max_iterations,
            "max_seconds": budget.max_seconds, "max_concurrency": budget.max_concurrency,
            "max_cost_usd": budget.max_cost_usd}
