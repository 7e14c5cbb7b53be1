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
import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from grapharc.cli.core_commands import HELP_DEMO
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
    app = typer.Typer(name="demo", help=HELP_DEMO, no_args_is_help=True, add_completion=False,
                      pretty_exceptions_enable=False, rich_markup_mode=None)
    for stage in STAGES:
        app.command(stage.name)(stage_command(stage))
    app.command("agent")(agent_command)
    return app


def add_demo_group(app: typer.Typer) -> None:
    """Add the ``demo`` group to ``app``: the stages, and the session family's approval demo."""
    from grapharc.cli.session_commands import add_approval_demo

    demo_app = build_demo_app()
    add_approval_demo(demo_app)
    app.add_typer(demo_app, name="demo")


def _run(stage: str, as_json: bool, flags: dict[str, Any], config_path: Path | None,
         defaults: dict[str, Any], work: Callable[[Config], StageOutcome]) -> None:
    """Resolve the settings, run the stage, and report it (0 demonstrated, 1 not, 2 could not run)."""
    from grapharc.cli.output import ExitCode, emit, fail, terminal_safe
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
    shown = dataclasses.replace(  # the human view shows model output: escape what a terminal acts on
        outcome, facts=terminal_safe((("config", config.line()), *outcome.facts)),
        summary=terminal_safe(outcome.summary), model=terminal_safe(outcome.model),
        hints=terminal_safe(outcome.hints))
    document = {**outcome.document(),
                "config": {"path": str(config.path) if config.path else None, "line": config.line()},
                "sources": config.sources()}
    emit(document, as_json, lambda _doc: shown.render(),
         ExitCode.OK if outcome.demonstrated else ExitCode.NEGATIVE)


def _warn(warning: str) -> None:
    """A stage's warning, on stderr in both modes (the JSON document carries it too)."""
    from grapharc.cli.output import terminal_text

    sys.stderr.write(f"warning: {terminal_text(warning)}\n")


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


MemoryOption = Annotated[str | None, typer.Option(
    "--memory", metavar="URI", show_default=False,
    help="Claim store URI: memory: (gone when the process ends; the default), sqlite:PATH, "
         "ladybug:PATH or a bare PATH (sqlite), all durable. Default: the memory setting "
         "(GRAPHARC_MEMORY, memory = ... in grapharc.toml), else memory:.")]
ReviewerOption = Annotated[str | None, typer.Option(
    "--reviewer-model", help="Real model spec for the reviewer (default: the scripted reviewer, "
                             "or --model's spec when that is given); best from another vendor.")]

VALUE, SETTING, PATH = "value", "setting", "path"


@dataclass(frozen=True)
class StageOption:
    """One option of a stage command: its parameter, and how it reaches the stage.

    A ``setting`` resolves flag > env > grapharc.toml > ``fallback`` (the stage module's
    default, else none). ``to`` is the stage runner's keyword for it, passed as typed
    (``VALUE``), as the resolved setting (``SETTING``) or as a resolved path (``PATH``).
    """

    name: str
    annotation: Any
    default: Any = None
    setting: bool = False
    to: str | None = None
    read: str = VALUE
    fallback: Callable[[ModuleType], Any] | None = None

    def given(self, value: Any, settings: Config) -> Any:
        """What the stage runner is handed for ``value``, typed or resolved."""
        if self.read == SETTING:
            return settings.value(self.name)
        return value.resolve() if self.read == PATH else value


@dataclass(frozen=True)
class Stage:
    """One ``demo`` stage: ``grapharc.examples.<name>``'s ``run_<name>`` behind a command titled
    ``title`` with ``--json``, ``--config``, ``--trace`` and ``options``. A stage with a budget
    hands its runner the configured one, over its module's ``DEFAULT_BUDGET``; a stage with no
    model in it refuses ``--model``; a stage that ``warns`` is handed ``warn``, which prints on stderr
    at once (before the run, so a run that fails still warned)."""

    name: str
    title: str
    options: tuple[StageOption, ...]
    budget: bool = True
    has_model: bool = True
    warns: bool = False


def choice(name: str, default: StrEnum, help: str) -> StageOption:
    """An option ``--<name>`` choosing one of ``default``'s kind, handed to the runner as chosen."""
    return StageOption(name, type(default), typer.Option(default, f"--{name}", help=help), to=name)


JSON = StageOption("as_json", JsonOption, False)
CONFIG = StageOption("config", ConfigFile)
TRACE = StageOption("trace", TraceOption, setting=True, to="trace", read=SETTING)
MODEL = StageOption("model", ModelOption, setting=True, to="model_spec")
MAX_ROUNDS = StageOption("max_rounds", MaxRounds, setting=True, to="max_rounds", read=SETTING,
                         fallback=lambda stage: stage.DEFAULT_ROUNDS)
MAX_ITERATIONS = StageOption("max_iterations", MaxIterations, setting=True)
MAX_TOKENS = StageOption("max_tokens", MaxTokens, setting=True)
MEMORY = StageOption("memory", MemoryOption, setting=True, to="memory", read=SETTING,
                     fallback=lambda stage: "memory:")
CHECKPOINTS_OPTION = StageOption("checkpoints", CheckpointsOption, CHECKPOINTS, to="checkpoints", read=PATH)
REVIEWER = StageOption("reviewer_model", ReviewerOption, to="reviewer_spec")
BUDGET = (MAX_ITERATIONS, MAX_TOKENS)

STAGES = (
    Stage("stage0",
          "Deterministic DAG: load -> split -> count -> report, written atomically and resumable.", (
        StageOption("thread", Annotated[str | None, typer.Option(
            "--thread", help="Thread id: a new one by default; with --resume, the one to continue.")],
            to="thread_id"),
        StageOption("resume", Annotated[bool, typer.Option(
            "--resume", help="Continue --thread from its last checkpoint (after a failed attempt).")],
            False, to="resume"),
        StageOption("inject_failure", Annotated[Failure | None, typer.Option(
            "--inject-failure", help="Fail between the report's temp write and its rename: 'error' "
                                     "raises in process, 'kill' SIGKILLs the process.")],
            to="inject_failure"),
        StageOption("report_dir", Annotated[Path, option(
            "--report-dir", kind=Folder("report folder"), help="Folder for the report, <thread>.txt.")],
            Path(".grapharc/reports"), to="report_dir", read=PATH),
        CHECKPOINTS_OPTION,
        StageOption("model", Annotated[str | None, typer.Option("--model", hidden=True)])),
        budget=False, has_model=False),
    Stage("stage1", "One earned loop: discover -> act -> verify -> repeat, until a guard stops it.", (
        MODEL,
        choice("task", Task.IMPOSSIBLE, "impossible: no answer exists; solvable: one does; unbounded: "
                                        "answers keep improving forever."),
        MAX_ROUNDS, *BUDGET)),
    Stage("stage2", "Typed cyclic graph: extract claims -> verify -> retry, routed by code alone.", (
        MODEL,
        choice("scenario", ClaimScenario.INJECTION, "The scripted model's replies: injection (prose that "
               "tries to steer), bad-output (a malformed claim), clean (claims that verify)."),
        StageOption("max_attempts", Annotated[int, option(
            "--max-attempts", kind=Ranged(Count(1, 100), "N"),
            help="Extraction attempts before the router gives up.")], 3, to="max_attempts"),
        *BUDGET, CHECKPOINTS_OPTION)),
    Stage("stage3", "Bounded fan-out over three workers with failure isolation and dedup.", (
        MODEL,
        choice("scenario", FanoutScenario.ISOLATION, "isolation: one worker crashes and one hangs; overlap: "
               "all succeed and the shared chunks come back twice."),
        StageOption("max_concurrency", MaxConcurrency, setting=True),
        StageOption("worker_timeout", Annotated[float, option(
            "--worker-timeout", kind=Ranged(Number(0.01, 3600, "seconds", above=False), "SECONDS"),
            help="Seconds before a worker counts as hung.")], 2.0, to="worker_timeout"),
        MAX_TOKENS)),
    Stage("stage4", "Bounded investigation loop with convergence guards.", (
        MODEL,
        choice("case", Case.IMPOSSIBLE, "impossible: the logs cannot explain the spike; solvable: they can."),
        MAX_ROUNDS, *BUDGET)),
    Stage("stage5", "Verifier: fresh context + deterministic evidence anchor, failing closed.", (
        StageOption("model", Annotated[str | None, typer.Option(
            "--model", help="Real model spec for the author (default: the scripted author).")],
            setting=True, to="model_spec"),
        REVIEWER, *BUDGET), warns=True),
    Stage("stage6",
          "Memory: three runs against one store; a later one reuses a fact and sees the dead end.", (
        MODEL, MEMORY,
        StageOption("run", Annotated[int | None, option(
            "--run", kind=Ranged(Count(1, 3), "N"),
            help="Only this run (1 investigate, 2 correct, 3 recall), so each can be its own process; "
                 "needs a durable --memory.")], to="run_number"),
        *BUDGET)),
    Stage("capstone",
          "One research agent: recall, research, independent review, remember, answer from memory.", (
        StageOption("model", Annotated[str | None, typer.Option(
            "--model", help="Real model spec for the research agent (default: the scripted author).")],
            setting=True, to="model_spec"),
        REVIEWER, MEMORY,
        choice("scenario", ReviewScenario.HONEST, "The scripted reviewer: honest (judges each claim) or "
               "reject-all (supports nothing, so nothing is written or answered)."),
        *BUDGET), warns=True),
)


def stage_command(stage: Stage) -> Callable[..., None]:
    """The ``demo <stage>`` command: ``--json``, ``--config``, ``--trace``, then the stage's
    options in its table's order; it imports its stage only when it runs."""
    options = (TRACE, *stage.options)

    def command(**given: Any) -> None:
        as_json, config = given.pop("as_json"), given.pop("config")
        module = importlib.import_module(f"grapharc.examples.{stage.name}")
        flags = {o.name: given[o.name] for o in options if o.setting}
        defaults = {o.name: o.fallback(module) for o in options if o.fallback is not None}
        if stage.budget:
            defaults.update(_budget_defaults(module.DEFAULT_BUDGET))

        def work(settings: Config) -> StageOutcome:
            from grapharc.examples.demo_support import DemoInputError

            if not stage.has_model and given["model"] is not None:
                raise DemoInputError(f"{stage.name} is pure code with no model in it, so it takes no --model",
                                     hint="--model works for stage1 through stage6 and the capstone")
            kwargs = {o.to: o.given(given[o.name], settings) for o in options if o.to is not None}
            if stage.budget:
                kwargs["budget"] = _budget(settings)
            if stage.warns:
                kwargs["warn"] = _warn
            outcome: StageOutcome = getattr(module, f"run_{stage.name}")(**kwargs)
            return outcome

        _run(stage.name, as_json, flags, config, defaults, work)

    command.__signature__ = inspect.Signature([  # type: ignore[attr-defined]  # what Typer reads
        inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=o.annotation)
        for o in (JSON, CONFIG, *options)])
    command.__doc__ = stage.title
    command.__name__ = f"{stage.name}_command"
    return command


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
