"""Agent loop overhead: GraphARC's AgentNode against LangGraph's prebuilt tool loop, same run.

Both drive the same scripted tool-calling model (``mock/``: each step asks for one tool call,
then it answers) and the same trivial tool, for ``--steps`` model-and-tool steps. The plain
loop is LangGraph's own: a model node and the prebuilt ``ToolNode`` joined by
``tools_condition``. The GraphARC loop adds what governs it: permission decisions, argument
validation, the executor, the idempotency check, the trace of every sub-step (trace on, a
JSONL file in a temporary directory), typed writes and deep copies. Each figure is the best of
``--runs`` interleaved runs, after ``--warm-up`` uncounted runs of each loop (so first-use work,
imports and caches filled on a first call, is not in the figure); per-step cost is the run's
wall time over its steps. Every run, warm-up runs too, is checked before anything is printed:
both loops must end on the model's answer with one tool result per step, and the GraphARC
run's trace must show every tool call run and ``ok``; otherwise the script exits 1 and prints
no figure. Beside wall time, each line gives the
process's CPU time (user + sys, every thread) per step, best of the same runs: on a shared
machine it moves less than wall time, which waits for the plain loop's tool threads too.

    .venv/bin/python benchmarks/agent_loop.py [--steps N] [--runs N] [--warm-up N] [--quick] [--json]
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect_equal
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.tools import tool as langchain_tool
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel

from grapharc.harness import AgentNode, PermissionPolicy, Tool, ToolRegistry
from grapharc.harness.report import tool_calls
from grapharc.testing import ScriptedChatModel
from grapharc.trace import read_events


class LookupArgs(BaseModel):
    key: str


def lookup(workspace: str, key: str) -> str:
    """The tool both loops call: a dictionary lookup."""
    return f"value of {key}"


@langchain_tool("lookup")
def plain_lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def script(steps: int) -> list[Any]:
    calls = [AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"key": f"k{i}"}, "id": f"c{i}"}])
             for i in range(steps)]
    return [*calls, "done"]


class PlainState(BaseModel):
    messages: Annotated[list[AnyMessage], add_messages]


def plain_loop(steps: int) -> Any:
    """LangGraph's own loop (model node, prebuilt ToolNode, tools_condition) over ``steps`` tool calls."""
    model = ScriptedChatModel(responses=script(steps)).bind_tools([plain_lookup])

    def call_model(state: PlainState) -> dict[str, Any]:
        return {"messages": [model.invoke(state.messages)]}

    graph = StateGraph(PlainState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode([plain_lookup]))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    compiled = graph.compile()

    def run() -> Callable[[], None]:
        result = compiled.invoke({"messages": [HumanMessage("look things up")]},
                                 {"recursion_limit": 4 * steps + 10})
        return lambda: check_plain(result["messages"], steps)

    return run


def check_plain(messages: list[AnyMessage], steps: int) -> None:
    """The plain loop ran a tool per step and ended on the model's answer."""
    expect_equal((sum(m.type == "tool" for m in messages), messages[-1].content), (steps, "done"),
                 "the plain loop's tool results and answer")


def grapharc_loop(steps: int, workspace: Path, number: int) -> Any:
    """A GraphARC AgentNode loop over ``steps`` tool calls, tracing to its own file (``number``)."""
    model = ScriptedChatModel(responses=script(steps))
    tools = ToolRegistry([Tool("lookup", "look a key up", LookupArgs, lookup)])
    agent = AgentNode(model, tools, workspace=workspace, permissions=PermissionPolicy.from_flags(allow=["*"]),
                      max_steps=steps + 1)
    graph = agent.graph()
    graph.trace = workspace / f"trace-{number}.jsonl"
    compiled = graph.compile()

    def run() -> Callable[[], None]:
        result = compiled.invoke({"task": "look things up"}, {"recursion_limit": 4 * steps + 10})
        return lambda: check_grapharc(result, graph.trace, steps)

    return run


def check_grapharc(result: dict[str, Any], trace: Path, steps: int) -> None:
    """The GraphARC loop answered, and its trace shows every tool call run and ``ok``."""
    outcomes = [call["outcome"] for call in tool_calls(read_events(trace))]
    expect_equal((result.get("answer"), outcomes), ("done", ["ok"] * steps),
                 "the GraphARC loop's answer and its traced tool outcomes")


def per_step(make: Any, steps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step of one run of the loop ``make`` builds, once the run is checked."""
    run = make()
    started, cpu_started = time.perf_counter(), time.process_time()
    check = run()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    check()
    return seconds / steps, cpu / steps


def timed_runs(steps: int, runs: int, warm_up: int) -> tuple[list[tuple[float, float]], ...]:
    """(wall, CPU) per step of ``runs`` runs of each loop, interleaved so drift hits both alike,
    after ``warm_up`` runs of each that are checked but not counted."""
    plain_runs, grapharc_runs = [], []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(-warm_up, runs):
            plain = per_step(lambda: plain_loop(steps), steps)
            grapharc = per_step(lambda n=number: grapharc_loop(steps, Path(folder), n), steps)
            if number >= 0:
                plain_runs.append(plain)
                grapharc_runs.append(grapharc)
    return plain_runs, grapharc_runs


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--steps", type=Count(1, 100_000), default=200)
    parser.add_argument("--runs", type=Count(1, 10_000), default=7)
    parser.add_argument("--warm-up", type=Count(0, 10_000), default=2,
                        help="uncounted runs of each loop first")
    parser.add_argument("--quick", action="store_true", help="20 steps, one warm-up run, one run")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if options.quick:
        options.steps, options.runs, options.warm_up = 20, 1, 1
    if options.steps < 1 or options.runs < 1 or options.warm_up < 0:
        parser.error("--steps and --runs must be at least 1, --warm-up at least 0")
    plain_runs, grapharc_runs = timed_runs(options.steps, options.runs, options.warm_up)
    (plain, plain_cpu), (grapharc, grapharc_cpu) = (tuple(map(min, zip(*runs, strict=True)))
                                                    for runs in (plain_runs, grapharc_runs))
    result = {"steps": options.steps, "runs": options.runs, "warm_up": options.warm_up,
              "langgraph_prebuilt_us_per_step": plain * 1e6,
              "grapharc_agent_us_per_step": grapharc * 1e6, "ratio": grapharc / plain,
              "langgraph_prebuilt_cpu_us_per_step": plain_cpu * 1e6,
              "grapharc_agent_cpu_us_per_step": grapharc_cpu * 1e6, "cpu_ratio": grapharc_cpu / plain_cpu}
    if options.json:
        print(json.dumps(result))
        return 0
    for name, wall, cpu, note in (("langgraph prebuilt", plain, plain_cpu, ""),
                                  ("grapharc AgentNode", grapharc, grapharc_cpu, "  (trace on)")):
        print(f"agent loop, {options.steps} steps   {name}  {wall * 1e6:9.1f} us/step   "
              f"{wall / plain:.2f}x   CPU {cpu * 1e6:9.1f} us/step   {cpu / plain_cpu:.2f}x{note}")
    return 0


if __name__ == "__main__":
    checked_main(main)
