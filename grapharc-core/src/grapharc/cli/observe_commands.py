"""The trace commands: ``trace``, ``metrics``, ``viz``, ``replay``, ``diff`` and ``cost``.

All of them read the one JSONL record through ``grapharc.observe``. Exit codes: 0 the
command did its job, 1 the answer is negative (no events for that run id, or two runs
differ), 2 it could not run (a missing, unreadable, binary or malformed trace, a bad
option). Each imports ``grapharc.observe`` inside its body, so ``grapharc --help`` pays
nothing for them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from grapharc.cli.options import Ranged, ReadableFile, argument, option
from grapharc.cli.output import ExitCode, JsonOption, emit, fail
from grapharc.values import Count

T = TypeVar("T")

TracePath = Annotated[Path, argument("TRACE", kind=ReadableFile("trace file"),
                                     help="A JSONL trace a GraphARC run wrote.", show_default=False)]
RunArg = Annotated[str, typer.Argument(help="The run id (see: grapharc metrics PATH).", show_default=False)]
OptionalRun = Annotated[str | None, typer.Argument(help="The run id; every run in the trace if omitted.",
                                                   show_default=False)]
ByOption = Annotated[str | None, typer.Option("--by", help="Group by 'tenant' or 'label:KEY'.")]
ReducerOption = Annotated[list[str] | None, typer.Option(
    "--reducer", help="FIELD=REDUCER for a field LangGraph appended to (append, add, merge, replace); "
                      "repeatable. Other fields fold last-write-wins.")]


def add_observe_commands(app: typer.Typer) -> None:
    """Register the trace commands on ``app``."""
    app.command("trace")(trace_command)
    app.command("metrics")(metrics_command)
    app.command("viz")(viz_command)
    app.command("replay")(replay_command)
    app.command("diff")(diff_command)
    app.command("cost")(cost_command)


def _guarded(as_json: bool, produce: Callable[[], T]) -> T:
    """Run ``produce``; a missing run exits 1, any other known error exits 2, as one line."""
    from grapharc.errors import GraphARCError
    from grapharc.observe.errors import NoEventsError, UnknownRunError

    try:
        return produce()
    except (UnknownRunError, NoEventsError) as exc:
        fail(exc, as_json, ExitCode.NEGATIVE)
    except GraphARCError as exc:
        fail(exc, as_json)


def _warn(warnings: list[str], as_json: bool) -> None:
    """Human-mode warnings go to stderr (the JSON document carries them itself)."""
    if not as_json:
        for warning in warnings:
            sys.stderr.write(f"warning: {warning}\n")


def trace_command(
    path: TracePath,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's events.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread's events.")] = None,
    attempt: Annotated[int | None, option("--attempt", kind=Ranged(Count(1, 10**9), "N"),
                                          help="Only this attempt's events.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Pretty-print a trace, one event per line (JSON Lines with --json), optionally filtered.

    Events stream out as they are read: a malformed line stops the listing there, with the
    error on stderr (with --json, as a last line holding the error document).
    """
    from grapharc.cli.output import error_document
    from grapharc.errors import GraphARCError
    from grapharc.observe import codec
    from grapharc.observe.errors import NoEventsError
    from grapharc.observe.reader import TraceReader
    from grapharc.observe.render import event_line

    reader = TraceReader(path, run_id=run, thread_id=thread, attempt=attempt)
    write = sys.stdout.write
    shown = 0
    try:
        for event in reader:
            write(codec.dumps(event).decode("utf-8") + "\n" if as_json else event_line(event) + "\n")
            shown += 1
        if not shown:
            filters = (("run", run), ("thread", thread), ("attempt", attempt))
            wanted = " and ".join(f"{name} {value!r}" for name, value in filters if value is not None)
            raise NoEventsError(f"{path}: no events" + (f" for {wanted}" if wanted else ""),
                                hint=f"list the runs it holds with: grapharc metrics {path}")
    except GraphARCError as exc:
        code = ExitCode.NEGATIVE if isinstance(exc, NoEventsError) else ExitCode.CANNOT_RUN
        if not as_json:
            fail(exc, as_json, code)
        write(codec.dumps(error_document(exc.code, str(exc), exc.hint)).decode("utf-8") + "\n")
        raise typer.Exit(int(code)) from None
    _warn(reader.warnings(), as_json)


def metrics_command(path: TracePath, run: OptionalRun = None, by: ByOption = None,
                    as_json: JsonOption = False) -> None:
    """Tokens, retries, termination reason, per-node counts and durations of a run (or every run)."""
    from grapharc.observe.metrics import metrics
    from grapharc.observe.render import render_metrics

    report = _guarded(as_json, lambda: metrics(path, run, by=by))
    _warn(report.warnings, as_json)
    emit(report.to_document(), as_json, render_metrics)


def viz_command(path: TracePath, run: RunArg, as_json: JsonOption = False) -> None:
    """A Mermaid flowchart of the path a run took, with counts on repeated edges."""
    from grapharc.observe.viz import viz

    result = _guarded(as_json, lambda: viz(path, run))
    _warn(result.warnings, as_json)
    emit(result.to_document(), as_json, lambda doc: doc["mermaid"])


def replay_command(path: TracePath, run: RunArg, reducer: ReducerOption = None,
                   as_json: JsonOption = False) -> None:
    """Reconstruct a run from its trace (node sequence, folded state, timing, failures); runs nothing."""
    import tempfile

    from grapharc.observe import codec
    from grapharc.observe.fold import parse_reducer_options
    from grapharc.observe.render import render_replay_summary, render_step
    from grapharc.observe.replay import ReplayStep, replay

    with tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8") as spool:
        separator = ["\n"]

        def keep(step: ReplayStep) -> None:
            document = step.to_document()
            if as_json:
                spool.write(separator[0] + codec.dumps(document).decode("utf-8"))
                separator[0] = ",\n"
            else:
                spool.write(render_step(document) + "\n")

        result = _guarded(as_json, lambda: replay(
            path, run, reducers=parse_reducer_options(reducer or []), on_step=keep))
        _warn(result.warnings, as_json)
        _write_replay(result.to_document(), spool, as_json, render_replay_summary)


def _write_replay(summary: dict[str, Any], spool: Any, as_json: bool,
                  render: Callable[[dict[str, Any]], str]) -> None:
    """The summary and the spooled steps as one JSON document, or the steps then the summary."""
    import json
    import shutil

    spool.seek(0)
    out = sys.stdout
    if as_json:
        head = json.dumps(summary, indent=2, default=str, ensure_ascii=False)
        out.write(head[:-2] + ',\n  "steps": [')
        shutil.copyfileobj(spool, out)
        out.write("\n  ]\n}\n")
    else:
        shutil.copyfileobj(spool, out)
        out.write(render(summary) + "\n")
    out.flush()


def diff_command(path: TracePath, run_a: RunArg, run_b: RunArg, reducer: ReducerOption = None,
                 as_json: JsonOption = False) -> None:
    """What changed between two runs: path, state, tokens, outcome (exit 1 when they differ)."""
    from grapharc.observe.diff import diff
    from grapharc.observe.fold import parse_reducer_options
    from grapharc.observe.render import render_diff

    result = _guarded(as_json, lambda: diff(path, run_a, run_b,
                                            reducers=parse_reducer_options(reducer or [])))
    _warn(result.warnings, as_json)
    emit(result.to_document(), as_json, render_diff,
         ExitCode.OK if result.identical else ExitCode.NEGATIVE)


def cost_command(
    path: TracePath, run: OptionalRun = None,
    rate_card: Annotated[Path | None, option(
        "--rate-card", kind=ReadableFile("rate card"),
        help="A TOML rate card (USD per million tokens) to estimate cost with.")] = None,
    by: ByOption = None, as_json: JsonOption = False,
) -> None:
    """Spend per run, thread and node: provider-recorded cost and rate-card estimate, never mixed."""
    from grapharc.observe.cost import RateCard, cost
    from grapharc.observe.render import render_cost

    def produce() -> Any:
        card = RateCard.from_toml(rate_card) if rate_card is not None else None
        return cost(path, run, rate_card=card, by=by)

    report = _guarded(as_json, produce)
    _warn(report.warnings, as_json)
    emit(report.to_document(), as_json, render_cost)
