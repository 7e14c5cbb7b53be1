"""Stage 0, a deterministic DAG: load -> split -> count -> report, with an atomic, resumable write.

No model, no branches (``dag=True``). The report is written to a temp file in the report's
folder and moved into place with ``os.replace``, so a reader sees no report or the whole
one. The failure gate injects a failure between the temp write and the rename: an
in-process error (the temp file is removed on the way out) or a SIGKILL (nothing can
clean up, so the temp file is orphaned). Either way no report exists; resuming the
thread from its SQLite checkpoint re-runs only ``report``, which first sweeps temp files
an earlier attempt left, then writes exactly one report. Runs use LangGraph's ``sync``
durability: with the default (``async``) a kill can land before any checkpoint of a short
run reached the disk, leaving nothing to resume. The trace shows both attempts
with attempt 1 / 2 and non-overlapping step numbers.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from grapharc.errors import GraphARCError
from grapharc.examples.demo_choices import Failure
from grapharc.examples.demo_outcome import Check, StageOutcome
from grapharc.examples.demo_runs import RunRecord, run_record, thread_runs
from grapharc.examples.demo_support import (
    DemoInputError,
    holds_checkpoint,
    new_thread_id,
    open_checkpoints,
    refuse_shared_paths,
    thread_config,
)
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

if TYPE_CHECKING:
    from langgraph.checkpoint.base import CheckpointTuple

TITLE = "deterministic DAG: load -> split -> count -> report"
LESSON = (
    "A fixed pipeline with no model in it and no branches (dag=True refuses conditional edges "
    "and cycles). The report is written atomically: a temp file, then os.replace. Inject a "
    "failure between the two and no report exists; resume the thread from its checkpoint and "
    "only the report step re-runs, producing exactly one report."
)
SAMPLE = (
    "GraphARC runs LangGraph graphs under discipline. Every node declares the fields it may "
    "write, every run has a budget, and every step lands on the trace. The trace is the one "
    "record: metrics, replay and diff read the trace, so the views and the audit trail agree. "
    "A graph that crashes resumes from its checkpoint, and the trace shows every attempt."
)
TOP_WORDS = 5
BUDGET = Budget(max_iterations=10)  # also keeps the step jump after a killed attempt small
REPORT_MODE = 0o644
THREAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class InjectedFailureError(GraphARCError):
    """The failure a demo injected on purpose between a temp write and its rename."""


class Stage0State(GraphARCState):
    """The pipeline's state: where the report goes, then what each step derived (``report`` is
    the text written there)."""

    report_path: str
    text: str = ""
    words: list[str] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    report: str = ""


def temp_files(report: Path) -> list[Path]:
    """Temp files an atomic write of ``report`` created and has not renamed (yet)."""
    return sorted(report.parent.glob(f".{report.name}.*.tmp"))


def write_atomically(path: Path, text: str, before_rename: Callable[[Path], None] | None = None) -> None:
    """Write ``text`` to ``path`` via a temp file and ``os.replace``: all of it or nothing.

    ``before_rename(temp)`` runs between the two (the failure gate's injection point); if
    anything raises, the temp file is removed before the error propagates.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    temp = Path(name)
    try:
        os.fchmod(fd, REPORT_MODE)  # mkstemp makes it owner-only; a report is for everyone
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if before_rename is not None:
            before_rename(temp)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def _inject(failure: Failure, thread_id: str) -> Callable[[Path], None]:
    def fail(temp: Path) -> None:
        if failure is Failure.KILL:
            sys.stderr.write(
                f"stage0: killing this process between the temp write ({temp.name}) and the "
                f"rename, as a crash would; to resume, run the same command with --thread "
                f"{thread_id} --resume instead of --inject-failure\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        raise InjectedFailureError(
            f"injected failure between the temp write and the rename of {temp.name}")

    return fail


def render_report(counts: dict[str, int]) -> str:
    """The report's text: totals and the most frequent words."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    lines = [f"words: {sum(counts.values())}", f"distinct: {len(counts)}", "top words:"]
    lines += [f"  {word}: {count}" for word, count in ranked[:TOP_WORDS]]
    return "\n".join(lines) + "\n"


def build_stage0(*, trace: Path | None, checkpointer: Any, thread_id: str,
                 failure: Failure | None = None) -> Any:
    """The compiled DAG; ``failure`` injects one between the report's temp write and rename."""
    hook = _inject(failure, thread_id) if failure is not None else None

    def load(state: Stage0State) -> dict[str, Any]:
        return {"text": SAMPLE}

    def split(state: Stage0State) -> dict[str, Any]:
        return {"words": [word.strip(".,:;").lower() for word in state.text.split()]}

    def count(state: Stage0State) -> dict[str, Any]:
        return {"counts": dict(Counter(word for word in state.words if word))}

    def report(state: Stage0State) -> dict[str, Any]:
        path = Path(state.report_path)
        for orphan in temp_files(path):  # left by an attempt that was killed mid-write
            orphan.unlink(missing_ok=True)
        text = render_report(state.counts)
        write_atomically(path, text, hook)
        return {"report": text}  # the text, not the per-thread path: runs of the demo trace alike

    graph = GraphARC(Stage0State, name="stage0", budget=BUDGET, dag=True, trace=trace)
    graph.add_node("load", load, writes={"text"})
    graph.add_node("split", split, writes={"words"})
    graph.add_node("count", count, writes={"counts"})
    graph.add_node("report", report, writes={"report"})
    graph.add_edge(START, "load")
    graph.add_edge("load", "split")
    graph.add_edge("split", "count")
    graph.add_edge("count", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


def run_stage0(*, trace: Path, checkpoints: Path, report_dir: Path, thread_id: str | None = None,
               resume: bool = False, inject_failure: Failure | None = None) -> StageOutcome:
    """Run (or with ``resume``, continue) a stage-0 thread and check the report came out whole.

    A new run writes ``report_dir/<thread>.txt``; a resumed one writes wherever its first
    attempt said (the path is in the checkpoint).
    """
    if resume and thread_id is None:
        raise DemoInputError("--resume needs the thread to continue",
                             hint="pass --thread ID (printed by the run that failed)")
    if thread_id is not None and not THREAD_ID.fullmatch(thread_id):
        raise DemoInputError(f"thread id {thread_id!r} is not usable here: it names the report file",
                             hint="use letters, digits, '.', '_' and '-' (at most 100)")
    refuse_shared_paths(trace=trace, checkpoints=checkpoints, report_dir=report_dir)
    if resume and (thread_id is None or not holds_checkpoint(checkpoints, thread_id)):  # before any write
        raise _no_checkpoint(thread_id, checkpoints)
    thread_id = thread_id or new_thread_id("stage0")
    config = thread_config(thread_id)
    saver = open_checkpoints(checkpoints, trace=trace)
    try:  # every refusal comes before build_stage0 opens (and creates) the trace file
        payload = _start_or_resume(saver.get_tuple(config), thread_id, checkpoints, report_dir, resume)
    except DemoInputError:
        saver.conn.close()
        raise
    graph = build_stage0(trace=trace, checkpointer=saver, thread_id=thread_id, failure=inject_failure)
    error: InjectedFailureError | None = None
    try:
        try:  # "sync": each checkpoint is on disk before the next step runs, so a kill loses none
            graph.invoke(payload, config, durability="sync")
        except InjectedFailureError as exc:
            error = exc
        values = graph.get_state(config).values
    finally:
        graph.close()
        saver.conn.close()
    return _outcome(Path(values["report_path"]), values, run_record(trace, graph.last_run),
                    thread_runs(trace, thread_id), error, checkpoints,
                    _resume_hint(thread_id, trace, checkpoints))


def _start_or_resume(saved: CheckpointTuple | None, thread_id: str, checkpoints: Path, report_dir: Path,
                     resume: bool) -> dict[str, Any] | None:
    """The run input: a report path for a new thread, None (continue) for a resumed one.

    Reads the thread's latest checkpoint (``saved``, None when it has none) rather than a
    compiled graph, so a refusal is made before anything opens the trace file.
    """
    values = saved.checkpoint["channel_values"] if saved is not None else {}
    exists = bool(values)
    if resume and not exists:
        raise _no_checkpoint(thread_id, checkpoints)
    if resume and values.get("report"):
        raise DemoInputError(f"thread {thread_id!r} already finished: its report is "
                             f"{values['report_path']}",
                             hint="nothing to resume; run grapharc demo stage0 for a new thread")
    if exists and not resume:
        raise DemoInputError(f"thread {thread_id!r} already has checkpoints in {checkpoints}",
                             hint="add --resume to continue it, or omit --thread for a new one")
    if resume:
        return None
    return {"report_path": str((report_dir / f"{thread_id}.txt").resolve())}


def _no_checkpoint(thread_id: str | None, checkpoints: Path) -> DemoInputError:
    return DemoInputError(f"no checkpoint for thread {thread_id!r} in {checkpoints}",
                          hint="pass the thread id a failed stage0 run printed, and the same "
                               "--checkpoints file")


def _resume_hint(thread_id: str, trace: Path, checkpoints: Path) -> str:
    """The command that resumes ``thread_id``, naming the files only where they are not the defaults."""
    home = Path.cwd() / ".grapharc"
    command = f"grapharc demo stage0 --thread {thread_id} --resume"
    if Path(trace).resolve() != (home / "traces" / "stage0.jsonl").resolve():
        command += f" --trace {shlex.quote(str(trace))}"
    if Path(checkpoints).resolve() != (home / "checkpoints.db").resolve():
        command += f" --checkpoints {shlex.quote(str(checkpoints))}"
    return command


def _outcome(report: Path, values: dict[str, Any], run: RunRecord, runs: list[RunRecord],
             error: InjectedFailureError | None, checkpoints: Path, resume_hint: str) -> StageOutcome:
    leftovers = temp_files(report)
    counts: dict[str, int] = values.get("counts") or {}
    facts = [("report", f"{report}" + ("" if report.exists() else "  (not written)")),
             ("words", f"{sum(counts.values())} ({len(counts)} distinct)" if counts else "-")]
    facts += [("attempts" if index == 0 else "", _attempt_line(each))
              for index, each in enumerate(runs)]
    checks = [Check("no temp file is left beside the report", not leftovers)]
    if error is None:
        status = "completed"
        summary = (f"attempt {run.attempt} wrote the report atomically"
                   + (" after resuming from the checkpoint" if run.attempt > 1 else ""))
        whole = report.is_file() and report.read_text(encoding="utf-8") == render_report(counts)
        checks.insert(0, Check("the report exists and is whole", whole))
        hints: tuple[str, ...] = ()
    else:
        status = "failed"
        summary = ("the injected failure between the temp write and the rename left no report "
                   "and no temp file")
        checks.insert(0, Check("no report exists after the failure", not report.exists()))
        hints = (f"{resume_hint}   (continues from the checkpoint)",)
    if len(runs) > 1:
        checks.append(Check("attempts on the trace use non-overlapping steps", _disjoint(runs)))
    return StageOutcome(
        stage="stage0", title=TITLE, lesson=LESSON, status=status, summary=summary, run=run,
        checks=tuple(checks), facts=tuple(facts), stop_reason=run.stop_reason, hints=hints,
        state={"report_path": str(report), "report": values.get("report", ""),
               "words": sum(counts.values()), "distinct": len(counts)},
        details={"report": {"path": str(report), "exists": report.is_file(),
                            "temp_files": [str(path) for path in leftovers]},
                 "error": str(error) if error else None, "checkpoints": str(checkpoints),
                 "attempts": [{"attempt": each.attempt, "run_id": each.run_id,
                               "status": each.status, "steps": each.steps(),
                               "nodes": each.nodes_run()} for each in runs]})


def _attempt_line(run: RunRecord) -> str:
    steps = run.steps()
    span = f"steps {steps[0]}-{steps[-1]}" if steps else "no steps"
    ended = run.status or "killed (no run_end)"
    return f"{run.attempt}: {span}, ran {' -> '.join(run.nodes_run()) or 'nothing'}; {ended}"


def _disjoint(runs: list[RunRecord]) -> bool:
    seen: set[int] = set()
    for run in runs:
        steps = set(run.steps())
        if steps & seen:
            return False
        seen |= steps
    return True
