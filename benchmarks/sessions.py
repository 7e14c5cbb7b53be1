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
figure is the best of several runs. Every run is checked before anything is printed: a pause
left one approval waiting (the plain graph its interrupt), a finish or a resume in a new
process completed the thread and released the loan, every session was listed and completed and
every plain thread ran its node; otherwise the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/sessions.py [--runs N] [--sessions N] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def best(runs: int, measure: Callable[[Path], float]) -> float:
    """The fastest of ``runs`` measurements, each in a fresh temporary directory."""
    timings = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            timings.append(measure(Path(folder)))
    return min(timings)


def clocked(fn: Callable[[], Any], check: Callable[[Any], None] = lambda _: None) -> float:
    """Seconds one call of ``fn`` took, once ``check`` has accepted what it returned."""
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    check(result)
    return seconds


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


def plain_pause(folder: Path) -> float:
    graph = plain_credit_graph(plain_saver(folder))
    plain_paused(graph.invoke(APPLICATION, {"configurable": {"thread_id": "warm-up"}}))
    return clocked(lambda: graph.invoke(APPLICATION, {"configurable": {"thread_id": "t"}}), plain_paused)


def session_manager(folder: Path) -> SessionManager:
    manager = SessionManager(folder / "sessions")
    register_credit_graph(manager)
    return manager


def session_pause(folder: Path) -> float:
    manager = session_manager(folder)
    paused(manager.start(demo.GRAPH_NAME, APPLICATION, thread_id="warm-up"))
    return clocked(lambda: manager.start(demo.GRAPH_NAME, APPLICATION, thread_id="t"), paused)


def session_finish(folder: Path) -> float:
    manager = session_manager(folder)

    def story(thread_id: str) -> Any:
        waiting = manager.start(demo.GRAPH_NAME, APPLICATION, thread_id=thread_id)
        return manager.resume(thread_id, waiting.holds[0].approval_id, "approved", decider="credit-desk")

    completed(story("warm-up"))
    return clocked(lambda: story("t"), completed)


def plain_finish(folder: Path) -> float:
    graph = plain_credit_graph(plain_saver(folder))

    def story(thread_id: str) -> Any:
        config = {"configurable": {"thread_id": thread_id}}
        graph.invoke(APPLICATION, config)
        return graph.invoke(Command(resume="approved"), config)

    released(story("warm-up"))
    return clocked(lambda: story("t"), released)


def in_new_process(code: str) -> float:
    """Seconds a fresh interpreter took to run ``code`` (which must exit 0)."""
    return clocked(lambda: run([sys.executable, "-c", code]))


def plain_resume_process(folder: Path) -> float:
    plain_pause(folder)
    code = PLAIN_RESUME.format(bench=str(Path(__file__).parent), db=str(folder / "plain.db"))
    seconds = in_new_process(code)
    released(plain_credit_graph(plain_saver(folder)).get_state({"configurable": {"thread_id": "t"}}).values)
    return seconds


def session_resume_process(folder: Path) -> float:
    session_pause(folder)
    seconds = in_new_process(SESSION_RESUME.format(directory=str(folder / "sessions")))
    manager = session_manager(folder)
    try:
        completed(manager.get("t"))
    finally:
        manager.close()
    return seconds


def bare_interpreter(folder: Path) -> float:
    return in_new_process("import grapharc.session.manager, grapharc.examples.approval")


class Tick(GraphARCState):
    n: int = 0


def tick(state: Any) -> dict[str, int]:
    return {"n": state.n + 1}


def many_sessions(count: int) -> dict[str, float]:
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


def measure(runs: int, count: int) -> dict[str, Any]:
    story = {
        "pause": {"session": best(runs, session_pause), "plain": best(runs, plain_pause)},
        "finish": {"session": best(runs, session_finish), "plain": best(runs, plain_finish)},
        "resume_in_new_process": {"session": best(runs, session_resume_process),
                                  "plain": best(runs, plain_resume_process),
                                  "interpreter_and_imports": best(runs, bare_interpreter)},
    }
    for figures in story.values():
        figures["ratio"] = figures["session"] / figures["plain"]
    scale = many_sessions(count)
    per = {name: seconds / count for name, seconds in scale.items()}
    return {"story": story, "sessions": count, "total_seconds": scale, "per_session_seconds": per,
            "run_ratio": scale["run"] / scale["plain_run"]}


def render(result: dict[str, Any]) -> str:
    lines = ["credit story (LN-7310)           session      plain LangGraph   ratio"]
    for name, figures in result["story"].items():
        lines.append(f"  {name:<30} {figures['session'] * 1000:9.1f} ms {figures['plain'] * 1000:12.1f} ms "
                     f"{figures['ratio']:7.2f}x")
    spawn = result["story"]["resume_in_new_process"]["interpreter_and_imports"]
    lines.append(f"  (a new interpreter importing grapharc.session alone: {spawn * 1000:.1f} ms)")
    count = result["sessions"]
    lines.append(f"{count} sessions                      total        per session")
    for name, seconds in result["total_seconds"].items():
        per = result["per_session_seconds"][name]
        lines.append(f"  {name:<30} {seconds * 1000:9.1f} ms {per * 1e6:12.1f} us")
    lines.append(f"  one-node run, session / plain LangGraph thread: {result['run_ratio']:.2f}x")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=1000)
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
