"""One MCP tool call through GraphARC's harness against the same call made directly with the SDK.

The server is tests/grapharc-mcp/mcp_servers.py's ``notes`` server (written with the SDK's
``MCPServer``), started over stdio for each side. The direct side opens the SDK's own
``stdio_client`` and ``ClientSession`` (held by one task of an event loop this thread runs for each
round, with anyio told it runs on asyncio as ``anyio.run`` tells it) and calls ``echo``. The harness
side is a GraphARC agent (``build_agent`` with ``[mcp.servers.notes]``, a policy document allowing
``notes.*``, the trace written to a JSONL file) whose scripted model asks for its calls in one
reply, so each goes through the permission decision, argument validation against the server's
schema, the ``mcp`` executor, redaction, the trace and the tool message. A harness call costs the
agent's run with ``--calls`` calls less its run with a quarter as many, over the difference (the
model steps, the tools step and the graph's own work cancel out); a direct call costs its round
over ``--calls``. Answers are checked after the clock stops: every direct answer must be the text
sent, and every harness run's trace must show each call ``ok`` on server ``notes`` with executor
``mcp``; otherwise the script exits 1 and prints no figure.

Timed (the default): each round times a direct round and the two harness runs in turn, so load
on the machine hits all alike; each figure is the median over ``--rounds`` rounds, in wall time
and in this process's CPU time (user + sys: the client's own work, where GraphARC's overhead is),
the harness's CPU split by thread too (the agent's, and the MCP loop's background thread's).

``--count``: instructions instead of time, which a noisy machine does not move. Each side runs in
two processes under valgrind's callgrind (``PYTHONHASHSEED=0``), one making ``--calls`` calls and
one a quarter as many after the same warm-up, and the difference over the extra calls is each
side's instructions per call (start-up and the warm-up cancel out). Slow: a few minutes.

    .venv/bin/python benchmarks/mcp_call.py [--calls N] [--rounds N] [--count] [--quick] [--json]
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import sniffio
from _arguments import Count, benchmark_parser
from _callgrind import dump_total, tool
from _checked import checked_main, expect, expect_equal, run
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
WARM_UP_CALLS = 20
"""Calls each counted process makes first, uncounted by the difference: imports, validators, caches."""
LOOP_THREAD = "grapharc-mcp"


def clock() -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds)."""
    return time.perf_counter(), time.process_time()


def thread_clocks() -> tuple[float, float]:
    """(this thread's CPU seconds, the MCP loop thread's CPU seconds)."""
    loop_thread = next(thread for thread in threading.enumerate() if thread.name == LOOP_THREAD)
    assert loop_thread.ident is not None
    return time.thread_time(), time.clock_gettime(time.pthread_getcpuclockid(loop_thread.ident))


class DirectSession:
    """The SDK's own ``stdio_client`` and ``ClientSession`` on the notes server, held open by one task
    of a private event loop that this thread runs for each round, so direct rounds can interleave
    with the harness's (an anyio task group must be left by the task that entered it)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.rounds: asyncio.Queue[tuple[int, asyncio.Future[tuple[float, float]]] | None] = asyncio.Queue()
        self.serving = self.loop.create_task(self._serve())

    async def _serve(self) -> None:
        sniffio.current_async_library_cvar.set("asyncio")  # as anyio.run does: anyio finds it at once
        parameters = StdioServerParameters(command=sys.executable, args=[str(SERVER), "notes"])
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            while (asked := await self.rounds.get()) is not None:
                calls, answer = asked
                answer.set_result(await self._round(session, calls))

    @staticmethod
    async def _round(session: ClientSession, calls: int) -> tuple[float, float]:
        texts = [f"t{index}" for index in range(calls)]
        results = []
        wall, cpu = clock()
        for text in texts:
            results.append(await session.call_tool("echo", {"text": text}))
        end_wall, end_cpu = clock()
        wrong = [(text, result.content) for text, result in zip(texts, results, strict=True)
                 if not (isinstance(block := result.content[0], TextContent) and block.text == text)]
        expect(not wrong, f"the SDK's answers to echo, (sent, answered): {wrong[:3]!r}")
        return (end_wall - wall) / calls, (end_cpu - cpu) / calls

    def run(self, calls: int) -> tuple[float, float]:
        """Per-call (wall, CPU) of ``calls`` echo calls made directly."""

        async def ask() -> tuple[float, float]:
            answer: asyncio.Future[tuple[float, float]] = self.loop.create_future()
            await self.rounds.put((calls, answer))
            await asyncio.wait({answer, self.serving}, return_when=asyncio.FIRST_COMPLETED)
            if not answer.done():
                self.serving.result()  # the session's failure, raised here
            expect(answer.done(), "the direct session ended without answering")
            return answer.result()

        return self.loop.run_until_complete(ask())

    def close(self) -> None:
        self.rounds.put_nowait(None)
        self.loop.run_until_complete(self.serving)
        self.loop.close()


class HarnessRuns:
    """A GraphARC agent over the notes server, run with N tool calls in one model reply."""

    def __init__(self, folder: Path, *, check_traces: bool = True) -> None:
        self.folder = folder
        (folder / "ws").mkdir()
        (folder / "policy.toml").write_text(POLICY)
        self.runs = 0
        self.check_traces = check_traces
        """Read each run's trace back at once; a counted run's is read by the process counting it."""

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
        trace = trace_of(self.folder, self.runs)
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
        if self.check_traces:
            check_trace(trace, calls)
        answers = [message.content for message in out["messages"] if message.type == "tool"]
        expect_equal(answers, [f"t{i}" for i in range(calls)], "the harness's answers to echo")
        return end_wall - wall, end_cpu - cpu, end_agent_cpu - agent_cpu, end_loop_cpu - loop_cpu


def fewer_calls(calls: int) -> int:
    """The calls of the run subtracted from a run of ``calls``, timed or counted: a quarter."""
    return calls // 4


def trace_of(folder: Path, run: int) -> Path:
    """The trace file of a ``HarnessRuns``'s ``run``-th run."""
    return folder / f"trace-{run}.jsonl"


def check_trace(trace: Path, calls: int) -> None:
    """``WorkFailed`` unless ``trace`` shows ``calls`` echo calls, each ``ok`` on server ``notes``."""
    outcomes = [(event["tool"], event.get("server"), event.get("executor"), event["outcome"])
                for event in read_events(trace) if event["phase"] == "tool"]
    expect_equal(outcomes, [("notes.echo", "notes", "mcp", "ok")] * calls, "traced tool outcomes")


COUNTED_PROCESS = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import mcp_call; "
                   "mcp_call.checked_main(lambda: mcp_call.counted_side(sys.argv[1], int(sys.argv[2]), "
                   "mcp_call.Path(sys.argv[3])))")
"""What a process under callgrind runs for ``--count``: ``counted_side`` with its arguments."""


def counted_side(side: str, calls: int, folder: Path) -> None:
    """What one process under callgrind does for ``--count``: the warm-up, then ``calls`` calls on
    ``side``, each answer checked (a harness run's trace is checked by the counting process)."""
    if side == "direct":
        session = DirectSession()
        try:
            session.run(WARM_UP_CALLS)
            session.run(calls)
        finally:
            session.close()
        return
    background_loop()
    runs = HarnessRuns(folder, check_traces=False)
    runs.run(WARM_UP_CALLS)
    runs.run(calls)


def count_side(side: str, calls: int, folder: Path) -> int:
    """Instructions of a process making ``calls`` calls on ``side`` after the warm-up, counted by
    callgrind (``PYTHONHASHSEED=0``, so the same work counts the same)."""
    work = folder / f"{side}-{calls}"
    work.mkdir()
    dump = work / "callgrind.out"
    command = [tool("valgrind"), "--tool=callgrind", f"--callgrind-out-file={dump}", sys.executable,
               "-c", COUNTED_PROCESS, side, str(calls), str(work)]
    run(command, env={**os.environ, "PYTHONHASHSEED": "0"})
    if side == "harness":
        check_trace(trace_of(work, 2), calls)
    total = dump_total(dump)
    expect(total, f"callgrind counted nothing for {side} with {calls} calls")
    return total


def counts(calls: int) -> dict[str, Any]:
    """Instructions per call on each side, and their ratio: each side counted in two processes, one
    making ``calls`` calls and one a quarter as many, and the difference taken over the extra calls,
    so start-up, the warm-up and a run's own work cancel out. The four processes run two at a time."""
    fewer = fewer_calls(calls)
    jobs = [(side, n) for side in ("direct", "harness") for n in (fewer, calls)]
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(2) as pool:
        totals = dict(zip(jobs, pool.map(lambda job: count_side(*job, Path(folder)), jobs), strict=True))
    per_call = {side: (totals[side, calls] - totals[side, fewer]) / (calls - fewer)
                for side in ("direct", "harness")}
    expect(per_call["direct"] > 0, "the direct calls counted no instructions of their own")
    return {"calls": calls, "fewer_calls": fewer,
            "direct_instructions_per_call": round(per_call["direct"]),
            "harness_instructions_per_call": round(per_call["harness"]),
            "instruction_ratio": round(per_call["harness"] / per_call["direct"], 3), "aim": AIM}


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--calls", type=Count(4, 1_000_000), default=200)
    parser.add_argument("--rounds", type=Count(1, 10_000), default=7)
    parser.add_argument("--quick", action="store_true", help="20 calls, 3 rounds")
    parser.add_argument("--count", action="store_true",
                        help="count instructions per call with callgrind instead of timing")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if options.count:
        return report_counts(counts(20 if options.quick else options.calls), as_json=options.json)
    calls, rounds = (20, 3) if options.quick else (options.calls, options.rounds)
    background_loop()  # the MCP loop's thread, whose CPU time is read around each run
    direct_session = DirectSession()
    try:
        with tempfile.TemporaryDirectory() as folder:
            runs = HarnessRuns(Path(folder))
            direct_session.run(calls)  # warm-up: the session's first calls
            runs.run(calls)  # warm-up: imports, the schema validators, the policy engine
            direct, harness = [], []
            for _ in range(rounds):  # each round times all three, so load hits them alike
                direct.append(direct_session.run(calls))
                fewer = fewer_calls(calls)
                full, part_run = runs.run(calls), runs.run(fewer)
                harness.append(tuple((whole - part) / (calls - fewer)
                                     for whole, part in zip(full, part_run, strict=True)))
    finally:
        direct_session.close()
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


def report_counts(result: dict[str, Any], *, as_json: bool) -> int:
    if as_json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"MCP echo over stdio, instructions per call (callgrind; {result['calls']} calls less "
          f"{result['fewer_calls']}, over the difference)")
    print(f"  SDK ClientSession directly   {result['direct_instructions_per_call']:>12,}")
    print(f"  through GraphARC's harness   {result['harness_instructions_per_call']:>12,}")
    print(f"  harness / direct             {result['instruction_ratio']:>11.3f}x   (aim <= {AIM}x)")
    return 0


if __name__ == "__main__":
    checked_main(main)
