"""The governance commands: ``plan`` (the governed loop), ``run`` (a topology you wrote), ``kinds``.

Options are declared here; the work is in :mod:`grapharc.cli.governance`, imported
inside each command so ``grapharc --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grapharc.cli.options import (
    ConfigFile,
    MaxConcurrency,
    MaxCostUsd,
    MaxIterations,
    MaxSeconds,
    MaxTokens,
    PolicyFile,
    ReadableFile,
    TenantOption,
    TraceFile,
    argument,
    option,
    setting,
)
from grapharc.cli.output import JsonOption

RegistryOption = Annotated[str | None, typer.Option(
    "--registry", help="module:attr of the node registry, or 'plugins' for every installed kind.")]
PlanRounds = Annotated[int | None, option("--max-rounds", kind=setting("max_rounds", "N"),
                                          help="Planning rounds.")]
GraphFile = Annotated[Path, argument("GRAPH", kind=ReadableFile("graph file"),
                                     help="A graph file: a proposal you wrote, as JSON.")]

def add_governance_commands(app: typer.Typer) -> None:
    """Register ``plan``, ``run`` and ``kinds`` on ``app``."""
    app.command("plan")(plan_command)
    app.command("run")(run_command)
    app.command("kinds")(kinds_command)


def plan_command(
    goal: Annotated[str, typer.Argument(help="What the governed loop should achieve.")],
    as_json: JsonOption = False,
    policy: PolicyFile = None,
    registry: RegistryOption = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Planner model spec backend/model (default: the surface's scripted one).")
    ] = None,
    config: ConfigFile = None,
    trace: TraceFile = None,
    tenant: TenantOption = None,
    max_rounds: PlanRounds = None,
    max_tokens: MaxTokens = None,
    max_iterations: MaxIterations = None,
    max_seconds: MaxSeconds = None,
    max_cost_usd: MaxCostUsd = None,
) -> None:
    """Governed loop: propose -> admit -> execute -> replan, until a stated stop."""
    from grapharc.cli.governance import plan

    plan(goal, as_json, {"policy": policy, "registry": registry, "model": model, "trace": trace,
                         "tenant": tenant, "max_rounds": max_rounds, "max_tokens": max_tokens,
                         "max_iterations": max_iterations, "max_seconds": max_seconds,
                         "max_cost_usd": max_cost_usd}, config)


def run_command(
    graph: GraphFile,
    check_only: Annotated[bool, typer.Option(
        "--check-only", help="Admission as a linter: check, report, execute nothing.")] = False,
    unbounded: Annotated[bool, typer.Option(
        "--unbounded", help="Run even though no token, iteration, seconds or dollar budget is set.")
    ] = False,
    as_json: JsonOption = False,
    policy: PolicyFile = None,
    registry: RegistryOption = None,
    config: ConfigFile = None,
    trace: TraceFile = None,
    tenant: TenantOption = None,
    max_tokens: MaxTokens = None,
    max_iterations: MaxIterations = None,
    max_seconds: MaxSeconds = None,
    max_cost_usd: MaxCostUsd = None,
    max_concurrency: MaxConcurrency = None,
) -> None:
    """Run a topology you wrote through the same admission gate."""
    from grapharc.cli.governance import run

    run(graph, check_only, unbounded, as_json,
        {"policy": policy, "registry": registry, "trace": trace, "tenant": tenant,
         "max_tokens": max_tokens, "max_iterations": max_iterations,
         "max_seconds": max_seconds, "max_cost_usd": max_cost_usd,
         "max_concurrency": max_concurrency}, config)


def kinds_command(as_json: JsonOption = False, registry: RegistryOption = None) -> None:
    """List every proposable kind with the distribution (or module) it comes from."""
    from grapharc.cli.governance import kinds

    kinds(as_json, registry)
