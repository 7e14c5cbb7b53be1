"""The ``grapharc demo`` group: stage0 ... stage6 and the capstone, each with a failure gate.

Scripted models by default, so a stage is free and does the same thing every time;
``--model SPEC`` runs stage1 ... stage6 and the capstone against a real backend (stage0 has no
model), and the ``--reviewer-model SPEC`` of stage5 and the capstone picks the reviewer, with
a warning on stderr when author and reviewer reach one vendor; only the flags do, so a
``model`` configured for ``plan`` never makes a demo spend money. Other settings resolve
flag > env > grapharc.toml > the stage's default. A stage exits 0 when it showed what it
demonstrates (for the loops, the halt is the demonstration), 1 when a check did not hold, 2
when it could not run. Each command imports its stage inside its
body, so ``grapharc --help`` pays nothing for LangGraph.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from grapharc.cli.options import (
    ConfigFile,
    Folder,
    MaxConcurrency,
    MaxIterations,
    MaxRounds,
    MaxTokens,
    Ranged,
    TraceOutput,
    WritableFile,
    option,
)
from grapharc.cli.output import JsonOption
from grapharc.config.values import Count, Number
from grapharc.examples.demo_choices import (
    Case,
    ClaimScenario,
    Failure,
    FanoutScenario,
    ReviewScenario,
    Task,
)

if TYPE_CHECKING:
    from grapharc.config.settings import Config
    from grapharc.examples.demo_outcome import StageOutcome

HELP = (
    "Runnable lessons, one mechanism each, every one with a failure gate. Scripted models by "
    "default: free and deterministic. --model SPEC runs stages 1-6 and the capstone against a real "
    "backend."
)
CHECKPOINTS = Path(".grapharc/checkpoints.db")

TraceOption = Annotated[Path | None, option(
    "--trace", kind=TraceOutput(),
    help="Append JSONL events here (default: ./.grapharc/traces/<stage>.jsonl).")]
ModelOption = Annotated[str | None, typer.Option(
    "--model", help="Real model spec backend/model (default: the stage's scripted model).")]
CheckpointsOption = Annotated[Path, option(
    "--checkpoints", kind=WritableFile("checkpoint file"), help="SQLite checkpoint file.")]


def build_demo_app() -> typer.Typer:
    """The ``demo`` group with the commands stage0 ... stage6, capstone and agent."""
    app = typer.Typer(name="demo", help=HELP, no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode=None)
    app.command("stage0")(stage0_command)
    app.command("stage1")(stage1_command)
    app.command("stage2")(stage2_command)
    app.command("stage3")(stage3_command)
    app.command("stage4")(stage4_command)
    app.command("stage5")(stage5_command)
    app.command("stage6")(stage6_command)
    app.command("capstone")(capstone_command)
    app.command("agent")(agent_command)
    return app


def _run(stage: str, as_json: bool, flags: dict[str, Any], config_path: Path | None,
         defaults: dict[str, Any], work: Callable[[Config], StageOutcome]) -> None:
    """Resolve the settings, run the stage, and report it (0 demonstrated, 1 not, 2 could not run)."""
    from grapharc.cli.output import ExitCode, emit, fail, terminal_safe, terminal_text
    from grapharc.config.settings import load_config
    from grapharc.errors import GraphARCError
    from grapharc.examples.demo_support import DemoInputError

    try:
        config = load_config(flags, config=config_path,
                             defaults={"trace": f".grapharc/traces/{stage}.jsonl", **defaults})
        _refuse_trace_store(config)
        outcome = work(config)
    except GraphARCError as exc:
        fail(exc, as_json)
    except OSError as exc:  # a trace, checkpoint or report path the stage cannot use
        fail(DemoInputError(f"cannot use {exc.filename or 'a file'}: {exc.strerror or exc}",
                            hint="check the --trace, --checkpoints and --report-dir paths"), as_json)
    for warning in outcome.warnings:  # on stderr in both modes; the JSON document carries them too
        sys.stderr.write(f"warning: {terminal_text(warning)}\n")
    shown = dataclasses.replace(  # the human view shows model output: escape what a terminal acts on
        outcome, facts=terminal_safe((("config", config.line()), *outcome.facts)),
        summary=terminal_safe(outcome.summary), model=terminal_safe(outcome.model),
        hints=terminal_safe(outcome.hints))
    document = {**outcome.document(),
                "config": {"path": str(config.path) if config.path else None, "line": config.line()},
                "sources": config.sources()}
    emit(document, as_json, lambda _doc: shown.render(),
         ExitCode.OK if outcome.demonstrated else ExitCode.NEGATIVE)


def _refuse_trace_store(config: Config) -> None:
    """A demo reads its trace back from a JSONL file, so a ``trace`` setting naming a store URI
    (which ``plan`` and ``run`` take) is refused here rather than read as a path."""
    from grapharc.examples.demo_support import DemoInputError

    setting = config.setting("trace")
    if setting is not None and isinstance(setting.value, str):
        raise DemoInputError(f"trace from {setting.origin} names a traces store URI; the demos "
                             "write their trace to a JSONL file",
                             hint="name a file, e.g. --trace runs/demo.jsonl")


def _budget(config: Config) -> Any:
    from grapharc.governed.run import configured_budget

    return configured_budget(config)


def _budget_defaults(budget: Any) -> dict[str, Any]:
    return {name: value for name, value in dataclasses.asdict(budget).items() if value is not None}


def stage0_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    thread: Annotated[str | None, typer.Option(
        "--thread", help="Thread id: a new one by default; with --resume, the one to continue.")
    ] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue --thread from its last checkpoint (after a failed attempt).")
    ] = False,
    inject_failure: Annotated[Failure | None, typer.Option(
        "--inject-failure", help="Fail between the report's temp write and its rename: 'error' "
                                 "raises in process, 'kill' SIGKILLs the process.")] = None,
    report_dir: Annotated[Path, option(
        "--report-dir", kind=Folder("report folder"), help="Folder for the report, <thread>.txt.")
    ] = Path(".grapharc/reports"),
    checkpoints: CheckpointsOption = CHECKPOINTS,
    model: Annotated[str | None, typer.Option("--model", hidden=True)] = None,
) -> None:
    """Deterministic DAG: load -> split -> count -> report, written atomically and resumable."""

    def work(settings: Config) -> StageOutcome:
        from grapharc.examples.demo_support import DemoInputError
        from grapharc.examples.stage0 import run_stage0

        if model is not None:
            raise DemoInputError("stage0 is pure code with no model in it, so it takes no --model",
                                 hint="--model works for stage1 through stage6 and the capstone")
        return run_stage0(trace=settings.value("trace"), checkpoints=checkpoints.resolve(),
                          report_dir=report_dir.resolve(), thread_id=thread, resume=resume,
                          inject_failure=inject_failure)

    _run("stage0", as_json, {"trace": trace}, config, {}, work)


def stage1_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: ModelOption = None,
    task: Annotated[Task, typer.Option(
        "--task", help="impossible: no answer exists; solvable: one does; unbounded: answers keep "
                       "improving forever.")] = Task.IMPOSSIBLE,
    max_rounds: MaxRounds = None,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
) -> None:
    """One earned loop: discover -> act -> verify -> repeat, until a guard stops it."""
    from grapharc.examples.stage1 import DEFAULT_BUDGET, DEFAULT_ROUNDS, run_stage1

    def work(settings: Config) -> StageOutcome:
        return run_stage1(trace=settings.value("trace"), task=task, model_spec=model,
                          budget=_budget(settings), max_rounds=settings.value("max_rounds"))

    _run("stage1", as_json, {"trace": trace, "model": model, "max_rounds": max_rounds,
                             "max_iterations": max_iterations, "max_tokens": max_tokens}, config,
         {"max_rounds": DEFAULT_ROUNDS, **_budget_defaults(DEFAULT_BUDGET)}, work)


def stage2_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: ModelOption = None,
    scenario: Annotated[ClaimScenario, typer.Option(
        "--scenario", help="The scripted model's replies: injection (prose that tries to steer), "
                           "bad-output (a malformed claim), clean (claims that verify).")
    ] = ClaimScenario.INJECTION,
    max_attempts: Annotated[int, option(
        "--max-attempts", kind=Ranged(Count(1, 100), "N"),
        help="Extraction attempts before the router gives up.")] = 3,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
    checkpoints: CheckpointsOption = CHECKPOINTS,
) -> None:
    """Typed cyclic graph: extract claims -> verify -> retry, routed by code alone."""
    from grapharc.examples.stage2 import DEFAULT_BUDGET, run_stage2

    def work(settings: Config) -> StageOutcome:
        return run_stage2(trace=settings.value("trace"), checkpoints=checkpoints.resolve(),
                          scenario=scenario, model_spec=model,
                          max_attempts=max_attempts, budget=_budget(settings))

    _run("stage2", as_json, {"trace": trace, "model": model, "max_iterations": max_iterations,
                             "max_tokens": max_tokens}, config, _budget_defaults(DEFAULT_BUDGET), work)


def stage3_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: ModelOption = None,
    scenario: Annotated[FanoutScenario, typer.Option(
        "--scenario", help="isolation: one worker crashes and one hangs; overlap: all succeed and "
                           "the shared chunks come back twice.")] = FanoutScenario.ISOLATION,
    max_concurrency: MaxConcurrency = None,
    worker_timeout: Annotated[float, option(
        "--worker-timeout", kind=Ranged(Number(0.01, 3600, "seconds", above=False), "SECONDS"),
        help="Seconds before a worker counts as hung.")] = 2.0,
    max_tokens: MaxTokens = None,
) -> None:
    """Bounded fan-out over three workers with failure isolation and dedup."""
    from grapharc.examples.stage3 import DEFAULT_BUDGET, run_stage3

    def work(settings: Config) -> StageOutcome:
        return run_stage3(trace=settings.value("trace"), scenario=scenario,
                          model_spec=model, worker_timeout=worker_timeout,
                          budget=_budget(settings))

    _run("stage3", as_json, {"trace": trace, "model": model, "max_concurrency": max_concurrency,
                             "max_tokens": max_tokens}, config, _budget_defaults(DEFAULT_BUDGET), work)


def stage4_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: ModelOption = None,
    case: Annotated[Case, typer.Option(
        "--case", help="impossible: the logs cannot explain the spike; solvable: they can.")
    ] = Case.IMPOSSIBLE,
    max_rounds: MaxRounds = None,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
) -> None:
    """Bounded investigation loop with convergence guards."""
    from grapharc.examples.stage4 import DEFAULT_BUDGET, DEFAULT_ROUNDS, run_stage4

    def work(settings: Config) -> StageOutcome:
        return run_stage4(trace=settings.value("trace"), case=case, model_spec=model,
                          budget=_budget(settings), max_rounds=settings.value("max_rounds"))

    _run("stage4", as_json, {"trace": trace, "model": model, "max_rounds": max_rounds,
                             "max_iterations": max_iterations, "max_tokens": max_tokens}, config,
         {"max_rounds": DEFAULT_ROUNDS, **_budget_defaults(DEFAULT_BUDGET)}, work)


def stage5_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Real model spec for the author (default: the scripted author).")] = None,
    reviewer_model: Annotated[str | None, typer.Option(
        "--reviewer-model", help="Real model spec for the reviewer (default: the scripted reviewer, "
                                 "or --model's spec when that is given); best from another vendor.")
    ] = None,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
) -> None:
    """Verifier: fresh context + deterministic evidence anchor, failing closed."""
    from grapharc.examples.stage5 import DEFAULT_BUDGET, run_stage5

    def work(settings: Config) -> StageOutcome:
        return run_stage5(trace=settings.value("trace"), model_spec=model,
                          reviewer_spec=reviewer_model, budget=_budget(settings))

    _run("stage5", as_json, {"trace": trace, "model": model, "max_iterations": max_iterations,
                             "max_tokens": max_tokens}, config, _budget_defaults(DEFAULT_BUDGET), work)


MemoryOption = Annotated[str | None, typer.Option(
    "--memory", metavar="URI", show_default=False,
    help="Claim store URI: memory: (gone when the process ends; the default), sqlite:PATH, "
         "ladybug:PATH or a bare PATH (sqlite), all durable. Default: the memory setting "
         "(GRAPHARC_MEMORY, memory = ... in grapharc.toml), else memory:.")]
MEMORY_DEFAULT = {"memory": "memory:"}


def stage6_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: ModelOption = None,
    memory: MemoryOption = None,
    run: Annotated[int | None, option(
        "--run", kind=Ranged(Count(1, 3), "N"),
        help="Only this run (1 investigate, 2 correct, 3 recall), so each can be its own process; "
             "needs a durable --memory.")] = None,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
) -> None:
    """Memory: three runs against one store; a later one reuses a fact and sees the dead end."""
    from grapharc.examples.stage6 import DEFAULT_BUDGET, run_stage6

    def work(settings: Config) -> StageOutcome:
        return run_stage6(trace=settings.value("trace"), memory=settings.value("memory"),
                          run_number=run, model_spec=model, budget=_budget(settings))

    _run("stage6", as_json, {"trace": trace, "model": model, "memory": memory,
                             "max_iterations": max_iterations, "max_tokens": max_tokens}, config,
         {**MEMORY_DEFAULT, **_budget_defaults(DEFAULT_BUDGET)}, work)


def capstone_command(
    as_json: JsonOption = False,
    config: ConfigFile = None,
    trace: TraceOption = None,
    model: Annotated[str | None, typer.Option(
        "--model", help="Real model spec for the research agent (default: the scripted author).")
    ] = None,
    reviewer_model: Annotated[str | None, typer.Option(
        "--reviewer-model", help="Real model spec for the reviewer (default: the scripted reviewer, "
                                 "or --model's spec when that is given); best from another vendor.")
    ] = None,
    memory: MemoryOption = None,
    scenario: Annotated[ReviewScenario, typer.Option(
        "--scenario", help="The scripted reviewer: honest (judges each claim) or reject-all "
                           "(supports nothing, so nothing is written or answered).")
    ] = ReviewScenario.HONEST,
    max_iterations: MaxIterations = None,
    max_tokens: MaxTokens = None,
) -> None:
    """One research agent: recall, research, independent review, remember, answer from memory."""
    from grapharc.examples.capstone import DEFAULT_BUDGET, run_capstone

    def work(settings: Config) -> StageOutcome:
        return run_capstone(trace=settings.value("trace"), memory=settings.value("memory"),
                            model_spec=model, reviewer_spec=reviewer_model, scenario=scenario,
                            budget=_budget(settings))

    _run("capstone", as_json, {"trace": trace, "model": model, "memory": memory,
                               "max_iterations": max_iterations, "max_tokens": max_tokens}, config,
         {**MEMORY_DEFAULT, **_budget_defaults(DEFAULT_BUDGET)}, work)


def agent_command(
    as_json: JsonOption = False,
    trace: Annotated[Path, option(
        "--trace", kind=TraceOutput(), help="Append JSONL events here.")] = Path(
            ".grapharc/traces/demo-agent.jsonl"),
) -> None:
    """A scripted model fixes a failing test: one denied call, one refused escape, approved commands."""
    from grapharc.cli.output import ExitCode, emit, fail
    from grapharc.errors import GraphARCError
    from grapharc.examples.agent_demo import run_agent_demo

    try:
        demo = run_agent_demo(trace)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(demo.document, as_json, lambda _doc: "\n".join(demo.lines),
         ExitCode.OK if demo.demonstrated else ExitCode.NEGATIVE)
