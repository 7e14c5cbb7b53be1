"""One MCP tool call through GraphARC's harness against the same call made directly with the SDK.

The server is tests/grapharc-mcp/mcp_servers.py's ``notes`` server (written with the SDK's
``MCPServer``), started over stdio for each side: the direct side opens the SDK's own
``stdio_client`` and ``ClientSession`` and calls ``echo`` ``--calls`` times; the harness side is a
GraphARC agent (``build_agent`` with ``[mcp.servers.notes]``, a policy document allowing
``notes.*``, the trace written to a JSONL file) whose scripted model asks for the same ``--calls``
calls in one reply, so each goes through the permission decision, argument validation against the
server's schema, the ``mcp`` executor, redaction and the trace. The harness's cost per call is the
run with ``--calls`` calls less the same agent's run with none, over ``--calls`` (the model steps
and the graph's own work cancel out). Rounds interleave the three runs, so load on the machine
hits all alike; each figure is the median over ``--rounds`` rounds, in wall time and in this
process's CPU time (user + sys: the client's own work, where GraphARC's overhead is). The
harness's CPU is also split by thread: the agent's (governance, the trace, the hand-off to the
MCP loop) and the MCP loop's (the SDK's session, as on the direct side, plus the hand-off's
other half); the direct side runs on one thread. Every
direct answer must be the text sent, and every harness run's trace must show each call ``ok`` on
server ``notes`` with executor ``mcp``; otherwise the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/mcp_call.py [--calls N] [--rounds N] [--quick] [--json]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from _arguments import Count, benchmark_parser
from _checked import checked_main, expect, expect_equal
from langchain_core.messages import AIMessage
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import TextContent

from grapharc.harness.setup import AgentSettings, build_agent
from grapharc.mcp.loop import background_loop
from grapharc.testing import ScriptedChatModel
from grapharc.trace import read_events

SERVER = Path(__file__).resolve().parents[1] / "tests" / "grapharc-mcp" / "mcp_servers.py"
POLICY = 'version = "bench"\n[[rules]]\nid = "notes"\nresource = "tool"\ntool = "notes.*"\naction = "allow"\n'
AIM = 1.1
LOOP_THREAD = "grapharc-mcp"


def clock() -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds)."""
    return time.perf_counter(), time.process_time()


def thread_clocks() -> tuple[float, float]:
    """(this thread's CPU seconds, the MCP loop thread's CPU seconds)."""
    loop_thread = next(thread for thread in threading.enumerate() if thread.name == LOOP_THREAD)
    assert loop_thread.ident is not None
    return time.thread_time(), time.clock_gettime(time.pthread_getcpuclockid(loop_thread.ident))


def direct_calls(calls: int, rounds: int) -> list[tuple[float, float]]:
    """Per-call (wall, CPU) of ``calls`` echo calls through the SDK's ClientSession, per round."""

    async def measure() -> list[tuple[float, float]]:
        parameters = StdioServerParameters(command=sys.executable, args=[str(SERVER), "notes"])
        figures = []
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for _ in range(rounds):
                wall, cpu = clock()
                for index in range(calls):
                    result = await session.call_tool("echo", {"text": f"t{index}"})
                    block = result.content[0]
                    expect(isinstance(block, TextContent) and block.text == f"t{index}",
                           f"the SDK's answer to echo t{index}: {result.content!r}")
                end_wall, end_cpu = clock()
                figures.append(((end_wall - wall) / calls, (end_cpu - cpu) / calls))
        return figures

    return anyio.run(measure)


class HarnessRuns:
    """A GraphARC agent over the notes server, run with N tool calls in one model reply."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        (folder / "ws").mkdir()
        (folder / "policy.toml").write_text(POLICY)
        self.runs = 0

    def run(self, calls: int) -> tuple[float, float, float, float]:
        """(wall, CPU, agent thread CPU, MCP loop thread CPU) of one agent run whose model asks
        for ``calls`` echo calls, then answers."""
        self.runs += 1
        reply = AIMessage(content="", tool_calls=[
            {"name": "notes__echo", "args": {"text": f"t{i}"}, "id": f"c{i}"} for i in range(calls)])
        script = [reply, "done"] if calls else ["done"]
        settings = AgentSettings(
            task="echo", workspace=str(self.folder / "ws"), model="mock/bench", tools=(),
            policy=str(self.folder / "policy.toml"), policy_source="flag",
            tool_sources={"mcp": [{"origin": "benchmark", "table": {"servers": {"notes": {
                "command": sys.executable, "args": [str(SERVER), "notes"]}}}, "base": str(self.folder)}]})
        agent = build_agent(settings, model=ScriptedChatModel(responses=script))
        graph = agent.graph()
        trace = self.folder / f"trace-{self.runs}.jsonl"
        graph.trace = trace
        compiled = graph.compile()
        try:
            wall, cpu = clock()
            agent_cpu, loop_cpu = thread_clocks()
            out = compiled.invoke({"task": "echo"})
            end_agent_cpu, end_loop_cpu = thread_clocks()
            end_wall, end_cpu = clock()
        finally:
            compiled.close()
            for tool in agent.tools:
                tool.executor.connection.close()
        expect_equal(out["answer"], "done", "the agent's answer")
        outcomes = [(event["tool"], event.get("server"), event.get("executor"), event["outcome"])
                    for event in read_events(trace) if event["phase"] == "tool"]
        expect_equal(outcomes, [("notes.echo", "notes", "mcp", "ok")] * calls, "traced tool outcomes")
        answers = [message.content for message in out["messages"] if message.type == "tool"]
        expect_equal(answers, [f"t{i}" for i in range(calls)], "the harness's answers to echo")
        return end_wall - wall, end_cpu - cpu, end_agent_cpu - agent_cpu, end_loop_cpu - loop_cpu


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--calls", type=Count(1, 1_000_000), default=200)
    parser.add_argument("--rounds", type=Count(1, 10_000), default=7)
    parser.add_argument("--quick", action="store_true", help="20 calls, 3 rounds")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    calls, rounds = (20, 3) if options.quick else (options.calls, options.rounds)
    direct = direct_calls(calls, rounds + 1)[1:]  # the first round warms the session up
    background_loop()  # the MCP loop's thread, whose CPU time is read around each run
    with tempfile.TemporaryDirectory() as folder:
        runs = HarnessRuns(Path(folder))
        runs.run(calls)  # warm-up: imports, the schema validators, the policy engine
        harness = []
        for _ in range(rounds):
            full, empty = runs.run(calls), runs.run(0)
            harness.append(tuple((whole - none) / calls for whole, none in zip(full, empty, strict=True)))
    direct_wall = statistics.median(wall for wall, _ in direct)
    direct_cpu = statistics.median(cpu for _, cpu in direct)
    harness_wall = statistics.median(wall for wall, _, _, _ in harness)
    harness_cpu = statistics.median(cpu for _, cpu, _, _ in harness)
    result: dict[str, Any] = {
        "calls": calls, "rounds": rounds,
        "direct_us_per_call": round(direct_wall * 1e6, 1),
        "harness_us_per_call": round(harness_wall * 1e6, 1),
        "wall_ratio": round(harness_wall / direct_wall, 3),
        "direct_cpu_us_per_call": round(direct_cpu * 1e6, 1),
        "harness_cpu_us_per_call": round(harness_cpu * 1e6, 1),
        "harness_agent_thread_cpu_us_per_call": round(statistics.median(row[2] for row in harness) * 1e6, 1),
        "harness_loop_thread_cpu_us_per_call": round(statistics.median(row[3] for row in harness) * 1e6, 1),
        "cpu_ratio": round(harness_cpu / direct_cpu, 3), "aim": AIM}
    if options.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"MCP echo over stdio, {calls} calls x {rounds} rounds (median per call)")
        print(f"  SDK ClientSession directly   {result['direct_us_per_call']:>9.1f} us wall  "
              f"{result['direct_cpu_us_per_call']:>9.1f} us CPU")
        print(f"  through GraphARC's harness   {result['harness_us_per_call']:>9.1f} us wall  "
              f"{result['harness_cpu_us_per_call']:>9.1f} us CPU")
        for thread, label in (("agent", "the agent's"), ("loop", "the MCP loop's")):
            print(f"    {'of which on ' + label + ' thread':<46}"
                  f"{result[f'harness_{thread}_thread_cpu_us_per_call']:>9.1f} us CPU")
        print(f"  harness / direct             {result['wall_ratio']:>9.3f}x wall  "
              f"{result['cpu_ratio']:>9.3f}x CPU   (aim <= {AIM}x)")
    return 0


if __name__ == "__main__":
    checked_main(main)
