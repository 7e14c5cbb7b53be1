"""Durable sessions: what pausing, resuming in a new process and finishing cost, against plain LangGraph.

Story: the credit-approval demo graph (``grapharc.examples.approval``, application
LN-7310: seven node runs, then a pause at ``sign_off``). Measured in the same run:
- pause: a session started until it pauses, against plain LangGraph (the same node
  functions in a ``StateGraph`` over a ``SqliteSaver``) invoked until its interrupt;
- resume in a new process: a fresh interpreter that opens the directory, registers the
  graph, decides the approval and finishes the thread, against a fresh interpreter that
  resumes the plain graph with ``Command(resume=...)`` (interpreter start and imports
  included in both, and reported apart);
- finish: pause plus an in-process resume.
Before the clock starts, each side runs the story once on another thread of the same store
(checked like a timed run), so neither side's figure holds its first-use costs: our graph is
compiled and its checkpointer opened at a manager's first start, where plain LangGraph compiles
before its clock, and both pay SQLite's first statements on a new file.
Scale: 1,000 sessions created, listed, and each run through a one-node graph, against
1,000 plain LangGraph threads; per-session cost is the total divided by 1,000. Each
figure is the best of several runs. Beside each wall time is the CPU time (user + sys, every
thread) of this process and of the interpreters it started and waited for, best of the same
runs: on a shared machine it moves far less than wall time, so the CPU ratio is the one a noisy
run does not decide. Every run is checked before anything is printed: a pause
left one approval waiting (the plain graph its interrupt), a finish or a resume in a new
process completed the thread and released the loan, every session was listed and completed and
every plain thread ran its node; otherwise the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/sessions.py [--runs N] [--sessions N] [--quick] [--json]
"""

from __future__ import annotations

import json
import resource
import sqlite3
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect, expect_equal, run
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START
from langgraph.graph import StateGraph as PlainStateGraph
from langgraph.types import Command

from grapharc import GraphARC, GraphARCState
from grapharc.examples import approval as demo
from grapharc.examples.approval import CreditState, register_credit_graph
from grapharc.session import SessionManager

APPLICATION = {"application_id": "LN-7310"}

PLAIN_RESUME = textwrap.dedent("""
    import sqlite3, sys
    sys.path.insert(0, {bench!r})
    from sessions import plain_credit_graph
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command
    graph = plain_credit_graph(SqliteSaver(sqlite3.connect({db!r}, check_same_thread=False)))
    graph.invoke(Command(resume="approved"), {{"configurable": {{"thread_id": "t"}}}})
""")

SESSION_RESUME = textwrap.dedent("""
    from grapharc.examples.approval import register_credit_graph
    from grapharc.session import SessionManager
    manager = SessionManager({directory!r})
    register_credit_graph(manager)
    session = manager.get("t")
    manager.resume("t", session.holds[0].approval_id, "approved", decider="credit-desk")
""")


def plain_credit_graph(saver: Any) -> Any:
    """The demo's node functions and routers in a plain LangGraph StateGraph."""
    graph = PlainStateGraph(CreditState)
    for name in ("fetch_application", "score", "assess", "fetch_income", "check_threshold", "sign_off",
                 "disburse", "decline"):
        graph.add_node(name, getattr(demo, name))
    graph.add_edge(START, "fetch_application")
    graph.add_edge("fetch_application", "score")
    graph.add_edge("score", "assess")
    graph.add_conditional_edges("assess", demo.route_assessment,
                                {"verify": "fetch_income", "within": "check_threshold", "outside": "decline"})
    graph.add_edge("fetch_income", "assess")
    graph.add_conditional_edges("check_threshold", demo.route_threshold,
                                {"sign_off": "sign_off", "release": "disburse"})
    graph.add_conditional_edges("sign_off", demo.route_answer,
                                {"approved": "disburse", "rejected": "decline"})
    graph.add_edge("disburse", END)
    graph.add_edge("decline", END)
    return graph.compile(checkpointer=saver)


class Timing(NamedTuple):
    """What one measured call took: wall seconds, and CPU seconds (see ``cpu_seconds``)."""

    wall: float
    cpu: float


def cpu_seconds() -> float:
    """CPU seconds (user + sys, every thread) of this process and of the children it waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best(runs: int, measure: Callable[[Path], Timing]) -> Timing:
    """The least wall and the least CPU time of ``runs`` measurements, each in a fresh temporary
    directory."""
    timings = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            timings.append(measure(Path(folder)))
    return Timing(min(t.wall for t in timings), min(t.cpu for t in timings))


def clocked(fn: Callable[[], Any], check: Callable[[Any], None] = lambda _: None) -> Timing:
    """What one call of ``fn`` took, once ``check`` has accepted what it returned."""
    start, cpu_start = time.perf_counter(), cpu_seconds()
    result = fn()
    timing = Timing(time.perf_counter() - start, cpu_seconds() - cpu_start)
    check(result)
    return timing


def paused(session: Any) -> None:
    expect_equal((session.status, len(session.holds)), ("paused", 1), "a paused session's status and holds")


def completed(session: Any) -> None:
    expect_equal(session.status, "completed", "a resumed session's status")


def plain_paused(values: dict[str, Any]) -> None:
    expect("__interrupt__" in values, f"the plain graph did not pause at sign_off: {sorted(values)}")


def released(values: dict[str, Any]) -> None:
    expect_equal(values.get("released"), True, "the plain graph's loan released")


def plain_saver(folder: Path) -> SqliteSaver:
    saver = SqliteSaver(sqlite3.connect(str(folder / "plain.db"), check_same_thread=False))
    saver.setup()
    return saver


def plain_pause(folder: Path) -> Timing:
    graph = plain_credit_graph(plain_saver(folder))
    plain_paused(graph.invoke(APPLICATION, {"configurable": {"thread_id": "warm-up"}}))
    return clocked(lambda: graph.invoke(APPLICATION, {"configurable": {"thread_id": "t"}}), plain_paused)


def session_manager(folder: Path) -> SessionManager:
    manager = SessionManager(folder / "sessions")
    register_credit_graph(manager)
    return manager


def session_pause(folder: Path) -> Timing:
    manager = session_manager(folder)
    paused(manager.start(demo.GRAPH_NAME, APPLICATION, thread_id="warm-up"))
    return clocked(lambda: manager.start(demo.GRAPH_NAME, APPLICATION, thread_id="t"), paused)


def session_finish(folder: Path) -> Timing:
    manager = session_manager(folder)

    def story(thread_id: str) -> Any:
        waiting = manager.start(demo.GRAPH_NAME, APPLICATION, thread_id=thread_id)
        return manager.resume(thread_id, waiting.holds[0].approval_id, "approved", decider="credit-desk")

    completed(story("warm-up"))
    return clocked(lambda: story("t"), completed)


def plain_finish(folder: Path) -> Timing:
    graph = plain_credit_graph(plain_saver(folder))

    def story(thread_id: str) -> Any:
        config = {"configurable": {"thread_id": thread_id}}
        graph.invoke(APPLICATION, config)
        return graph.invoke(Command(resume="approved"), config)

    released(story("warm-up"))
    return clocked(lambda: story("t"), released)


def in_new_process(code: str) -> Timing:
    """What a fresh interpreter took to run ``code`` (which must exit 0)."""
    return clocked(lambda: run([sys.executable, "-c", code]))


def plain_resume_process(folder: Path) -> Timing:
    plain_pause(folder)
    code = PLAIN_RESUME.format(bench=str(Path(__file__).parent), db=str(folder / "plain.db"))
    timing = in_new_process(code)
    released(plain_credit_graph(plain_saver(folder)).get_state({"configurable": {"thread_id": "t"}}).values)
    return timing


def session_resume_process(folder: Path) -> Timing:
    session_pause(folder)
    timing = in_new_process(SESSION_RESUME.format(directory=str(folder / "sessions")))
    manager = session_manager(folder)
    try:
        completed(manager.get("t"))
    finally:
        manager.close()
    return timing


def bare_interpreter(folder: Path) -> Timing:
    return in_new_process("import grapharc.session.manager, grapharc.examples.approval")


class Tick(GraphARCState):
    n: int = 0


def tick(state: Any) -> dict[str, int]:
    return {"n": state.n + 1}


def many_sessions(count: int) -> dict[str, Timing]:
    """Create, list and run ``count`` sessions of a one-node graph; and ``count`` plain threads."""
    with tempfile.TemporaryDirectory() as folder:
        manager = SessionManager(Path(folder) / "sessions")
        graph = GraphARC(Tick, name="tick")
        graph.add_node("tick", tick, writes={"n"})
        graph.add_edge(START, "tick")
        graph.add_edge("tick", END)
        manager.register(graph)
        created = clocked(lambda: [manager.create("tick", thread_id=f"c{i}") for i in range(count)])
        listed = clocked(lambda: manager.list(),
                         lambda found: expect_equal(len(found), count, "sessions listed"))
        ran = clocked(lambda: [manager.run(f"c{i}", {}) for i in range(count)])
        listed_done = clocked(lambda: manager.list(), lambda found: expect_equal(
            sum(session.status == "completed" for session in found), count, "sessions listed as completed"))
        plain = PlainStateGraph(Tick)
        plain.add_node("tick", tick)
        plain.add_edge(START, "tick")
        plain.add_edge("tick", END)
        compiled = plain.compile(checkpointer=plain_saver(Path(folder)))
        plain_ran = clocked(lambda: [compiled.invoke({}, {"configurable": {"thread_id": f"p{i}"}})
                                     for i in range(count)],
                            lambda results: expect_equal([r["n"] for r in results], [1] * count,
                                                         "each plain thread's count after its run"))
        manager.close()
    return {"create": created, "list": listed, "run": ran, "list_finished": listed_done,
            "plain_run": plain_ran}


def side_by_side(session: Timing, plain: Timing) -> dict[str, float]:
    """Our figure and plain LangGraph's, wall and CPU, and ours over theirs for each."""
    return {"session": session.wall, "plain": plain.wall, "ratio": session.wall / plain.wall,
            "session_cpu": session.cpu, "plain_cpu": plain.cpu, "cpu_ratio": session.cpu / plain.cpu}


def measure(runs: int, count: int) -> dict[str, Any]:
    interpreter = best(runs, bare_interpreter)
    story = {
        "pause": side_by_side(best(runs, session_pause), best(runs, plain_pause)),
        "finish": side_by_side(best(runs, session_finish), best(runs, plain_finish)),
        "resume_in_new_process": {**side_by_side(best(runs, session_resume_process),
                                                 best(runs, plain_resume_process)),
                                  "interpreter_and_imports": interpreter.wall,
                                  "interpreter_and_imports_cpu": interpreter.cpu},
    }
    scale = many_sessions(count)
    return {"story": story, "sessions": count,
            "total_seconds": {name: t.wall for name, t in scale.items()},
            "total_cpu_seconds": {name: t.cpu for name, t in scale.items()},
            "per_session_seconds": {name: t.wall / count for name, t in scale.items()},
            "per_session_cpu_seconds": {name: t.cpu / count for name, t in scale.items()},
            "run_ratio": scale["run"].wall / scale["plain_run"].wall,
            "run_cpu_ratio": scale["run"].cpu / scale["plain_run"].cpu}


def render(result: dict[str, Any]) -> str:
    lines = ["credit story (LN-7310)           session      plain LangGraph   ratio"
             "       CPU: session        plain   ratio"]
    for name, f in result["story"].items():
        wall = f"{f['session'] * 1000:9.1f} ms {f['plain'] * 1000:12.1f} ms {f['ratio']:7.2f}x"
        cpu = f"{f['session_cpu'] * 1000:12.1f} ms {f['plain_cpu'] * 1000:9.1f} ms {f['cpu_ratio']:6.2f}x"
        lines.append(f"  {name:<30} {wall}   {cpu}")
    resume = result["story"]["resume_in_new_process"]
    lines.append(f"  (a new interpreter importing grapharc.session alone: "
                 f"{resume['interpreter_and_imports'] * 1000:.1f} ms, "
                 f"CPU {resume['interpreter_and_imports_cpu'] * 1000:.1f} ms)")
    count = result["sessions"]
    lines.append(f"{count} sessions                      total        per session   CPU: total   per session")
    for name, seconds in result["total_seconds"].items():
        per, cpu = result["per_session_seconds"][name], result["total_cpu_seconds"][name]
        lines.append(f"  {name:<30} {seconds * 1000:9.1f} ms {per * 1e6:12.1f} us {cpu * 1000:9.1f} ms "
                     f"{result['per_session_cpu_seconds'][name] * 1e6:10.1f} us")
    lines.append(f"  one-node run, session / plain LangGraph thread: {result['run_ratio']:.2f}x, "
                 f"CPU {result['run_cpu_ratio']:.2f}x")
    return "\n".join(lines)


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Count(1, 10_000), default=3)
    parser.add_argument("--sessions", type=Count(1, 1_000_000), default=1000)
    parser.add_argument("--quick", action="store_true", help="one run, 20 sessions")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.sessions = 1, 20
    result = measure(args.runs, args.sessions)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    checked_main(main)
