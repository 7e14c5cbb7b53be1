"""The governance commands: ``plan`` (the governed loop), ``run`` (a topology you wrote), ``kinds``.

Options are declared here; the work is in :mod:`grapharc.cli.governance`, imported
inside each command so ``grapharc --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from grapharc.cli.output import JsonOption

ConfigOption = Annotated[Path | None, typer.Option(
    "--config", help="Config file to read instead of ./grapharc.toml (no parent search).")]
RegistryOption = Annotated[str | None, typer.Option(
    "--registry", help="module:attr of the node registry, or 'plugins' for every installed kind.")]
PolicyOption = Annotated[Path | None, typer.Option("--policy", help="Policy TOML document.")]
TraceOption = Annotated[Path | None, typer.Option("--trace", help="Append JSONL events here.")]
TenantOption = Annotated[str | None, typer.Option(
    "--tenant", help="Tenant whose scoped policy rules apply.")]
MaxTokens = Annotated[int | None, typer.Option("--max-tokens", help="Token budget.")]
MaxIterations = Annotated[int | None, typer.Option("--max-iterations",
                                                   help="Node-execution budget.")]
MaxSeconds = Annotated[float | None, typer.Option("--max-seconds", help="Wall-clock budget.")]
MaxCostUsd = Annotated[float | None, typer.Option(
    "--max-cost-usd", help="Dollar budget for priced model calls (an unpriced call ends the run).")]
MaxConcurrency = Annotated[int | None, typer.Option("--max-concurrency",
                                                    help="Parallel nodes at most.")]


def add_governance_commands(app: typer.Typer) -> None:
    """Register ``plan``, ``run`` and ``kinds`` on ``app``."""
    app.command("plan")(plan_command)
    app.command("run")(run_command)
    app.command("kinds")(kinds_command)


def plan_command(
    goal: Annotated[str, typer.Argument(help="What the governed loop should achieve.")],
    as_json: JsonOption = False,
    policy: PolicyOption = None,
    registry: RegistryOption = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Planner model spec backend/model (default: the surface's scripted one).")
    ] = None,
    config: ConfigOption = None,
    trace: TraceOption = None,
    tenant: TenantOption = None,
    max_rounds: Annotated[int | None, typer.Option("--max-rounds", help="Planning rounds.")] = None,
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
    graph: Annotated[Path, typer.Argument(help="A graph file: a proposal you wrote, as JSON.")],
    check_only: Annotated[bool, typer.Option(
        "--check-only", help="Admission as a linter: check, report, execute nothing.")] = False,
    unbounded: Annotated[bool, typer.Option(
        "--unbounded", help="Run even though no token, iteration, seconds or dollar budget is set.")
    ] = False,
    as_json: JsonOption = False,
    policy: PolicyOption = None,
    registry: RegistryOption = None,
    config: ConfigOption = None,
    trace: TraceOption = None,
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
