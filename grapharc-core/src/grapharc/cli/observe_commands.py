"""The trace commands: ``trace``, ``metrics``, ``viz``, ``replay``, ``diff`` and ``cost``.

All of them read the one JSONL record through ``grapharc.observe``, from a file or from the
``traces`` store a URI names (``postgresql://HOST/DB``). Exit codes: 0 the
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

from grapharc.cli.options import Ranged, ReadableFile, TraceLocation, argument, option
from grapharc.cli.output import (
    ExitCode,
    JsonOption,
    emit,
    error_document,
    fail,
    terminal_safe,
    terminal_text,
)
from grapharc.config.values import Count

T = TypeVar("T")

TracePath = Annotated[str, argument("TRACE", kind=TraceLocation(),
                                    help="A JSONL trace a GraphARC run wrote, or the trace store it "
                                         "wrote to.", show_default=False)]
RunArg = Annotated[str, typer.Argument(help="The run id (see: grapharc metrics PATH).", show_default=False)]
OptionalRun = Annotated[str | None, typer.Argument(help="The run id; every run in the trace if omitted.",
                                                   show_default=False)]
ByOption = Annotated[str | None, typer.Option("--by", help="Group by 'tenant' or 'label:KEY'.")]
ReducerOption = Annotated[list[str] | None, typer.Option(
    "--reducer", metavar="FIELD=REDUCER",
    help="FIELD=REDUCER for a field LangGraph appended to (append, add, merge, replace); "
         "repeatable. Other fields fold last-write-wins.")]


def add_observe_commands(app: typer.Typer) -> None:
    """Register the trace commands on ``app``."""
    for name, command in (("trace", trace_command), ("metrics", metrics_command), ("viz", viz_command),
                          ("replay", replay_command), ("diff", diff_command), ("cost", cost_command)):
        app.command(name)(command)


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
            sys.stderr.write(f"warning: {terminal_text(warning)}\n")


def trace_command(
    path: TracePath,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's events.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread's events.")] = None,
    attempt: Annotated[int | None, option("--attempt", kind=Ranged(Count(1, 10**9), "N"),
                                          help="Only this attempt's events.")] = None,
    as_json: JsonOption = False,
    as_jsonl: Annotated[bool, typer.Option(
        "--jsonl", help="Stream the events as JSON Lines, one event per line, as they are read.")
    ] = False,
) -> None:
    """Pretty-print a trace, one event per line, optionally filtered (--json: one document).

    --json prints one document, {"ok": true, "events": [...]}, once the whole trace has been
    read, so a damaged trace prints only the error document. --jsonl streams the events as they
    are read; a malformed line stops the stream there, and its last line is the error document.
    """
    from grapharc.errors import GraphARCError
    from grapharc.observe.errors import NoEventsError
    from grapharc.observe.render import event_line
    from grapharc.trace import codec
    from grapharc.trace.reader import TraceReader

    if as_json and as_jsonl:
        raise typer.BadParameter("--json and --jsonl are two formats; choose one", param_hint="--jsonl")
    reader = TraceReader(path, run_id=run, thread_id=thread, attempt=attempt)
    with _spool() as spool:
        out = spool if as_json else sys.stdout
        shown = 0
        try:
            for event in reader:
                if as_json or as_jsonl:
                    out.write(("\n" if as_json else "") + codec.dumps(event).decode("utf-8")
                              + ("," if as_json else "\n"))
                else:
                    out.write(event_line(terminal_safe(event)) + "\n")
                shown += 1
            if not shown:
                filters = (("run", run), ("thread", thread), ("attempt", attempt))
                wanted = " and ".join(f"{name} {value!r}" for name, value in filters if value is not None)
                raise NoEventsError(f"{reader.name}: no events" + (f" for {wanted}" if wanted else ""),
                                    hint=f"list the runs it holds with: grapharc metrics {reader.name}")
        except GraphARCError as exc:
            code = ExitCode.NEGATIVE if isinstance(exc, NoEventsError) else ExitCode.CANNOT_RUN
            if not as_jsonl:
                fail(exc, as_json, code)
            sys.stdout.write(codec.dumps(error_document(exc.code, str(exc), exc.hint)).decode("utf-8") + "\n")
            raise typer.Exit(int(code)) from None
        _warn(reader.warnings(), as_json)
        if as_json:
            _write_listing({"ok": True, "path": reader.name, "count": shown, "warnings": reader.warnings()},
                           "events", spool)


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
    emit(result.to_document(), as_json, lambda _doc: result.mermaid())  # labels escaped by viz


def replay_command(path: TracePath, run: RunArg, reducer: ReducerOption = None,
                   as_json: JsonOption = False) -> None:
    """Reconstruct a run from its trace (node sequence, folded state, timing, failures); runs nothing."""
    import shutil

    from grapharc.observe.fold import parse_reducer_options
    from grapharc.observe.render import render_replay_header, render_state, render_step
    from grapharc.observe.replay import ReplayStep, replay
    from grapharc.trace import codec

    with _spool() as spool:
        def keep(step: ReplayStep) -> None:
            document = step.to_document()
            if as_json:
                spool.write("\n" + codec.dumps(document).decode("utf-8") + ",")
            else:
                spool.write(render_step(terminal_safe(document)) + "\n")

        result = _guarded(as_json, lambda: replay(
            path, run, reducers=parse_reducer_options(reducer or []), on_step=keep))
        _warn(result.warnings, as_json)
        if as_json:
            _write_listing(result.to_document(), "steps", spool)
        else:
            document = result.to_document()
            sys.stdout.write(render_replay_header(terminal_safe(document)) + "\n")
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout)
            # JSON escapes the C0 controls inside strings itself; the rest a terminal acts on line by line
            state = render_state(document["state"]).split("\n")
            sys.stdout.write("\n".join(terminal_text(line) for line in state) + "\n")


def _spool() -> Any:
    """A text buffer that moves to a temporary file past 1 MiB, for listings too long to hold."""
    import tempfile

    return tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8")


def _write_listing(head: dict[str, Any], key: str, spool: Any) -> None:
    """One JSON document: ``head`` with ``key`` holding the items spooled as ``\\n<json>,`` each."""
    from grapharc.cli.output import document_text

    spool.seek(0)
    sys.stdout.write(document_text(head)[:-2] + f',\n  "{key}": [')
    held = ""  # the last character read; at the end, the last item's comma (dropped)
    while chunk := spool.read(1 << 16):
        sys.stdout.write(held + chunk[:-1])
        held = chunk[-1]
    sys.stdout.write("\n  ]\n}\n")
    sys.stdout.flush()


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
