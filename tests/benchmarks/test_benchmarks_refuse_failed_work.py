"""Each benchmark in its quick mode prints its figures, and prints none (exit status 1, the
failure named on stderr) when the work under its timed runs fails: one module of that work is
broken in every process of the benchmark (see benchmark_runs.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from benchmark_runs import Sabotage, assert_refused, run_benchmark


@dataclass(frozen=True)
class Case:
    """A benchmark's quick run, a line its figures print, and a sabotage of its work it must catch."""

    script: str
    args: tuple[str, ...]
    prints: str
    sabotage: Sabotage
    naming: str

    @property
    def command(self) -> tuple[str, ...]:
        """The script and its arguments, as run_benchmark takes them."""
        return (self.script, *self.args)


CASES = [
    Case("cli_startup.py", ("--quick", "--original", "none"), "grapharc --help",
         # the command exits 0 having printed nothing
         Sabotage("grapharc.cli.main", "main = lambda: None"),
         "grapharc --help printed no 'Usage: grapharc'"),
    Case("cli_startup.py", ("--quick", "--original", "none"), "grapharc demo stage0",
         # stage0 writes no report, so it does not demonstrate what it shows
         Sabotage("grapharc.examples.stage0",
                  "write_atomically = lambda path, text, before_rename=None: None"),
         "grapharc demo stage0 exited 1"),
    Case("claim_add.py", ("--quick", "--original", "none"), "inprocess  add()",
         # the in-process store drops every claim it is handed
         Sabotage("grapharc.memory.inprocess", "InMemoryClaimStore.add = lambda self, claim: claim"),
         "ours inprocess, round 0: the store does not hold the claims"),
    Case("claim_add.py", ("--quick", "--original", "none"), "sqlite     add()",
         # the SQLite store's add returns without writing (so without committing) the claim
         Sabotage("grapharc.memory.sqlite.store", "SQLiteMemoryStore.add = lambda self, claim: claim"),
         "ours sqlite, round 0: rows committed when the last add returned: got 0, expected 200"),
    Case("admission.py", ("--quick",), "check vs langgraph",
         # the parser keeps only the first node of each proposal
         Sabotage("grapharc.planner", "_parse = parse_proposal\n"
                                      "def parse_proposal(text):\n"
                                      "    whole = _parse(text)\n"
                                      "    return whole.model_copy(update={'nodes': whole.nodes[:1]})"),
         "10-node chain"),
    Case("tool_executors.py", ("--quick",), "sandboxed / local at p50",
         Sabotage("grapharc.tools.sandbox.executor",
                  "SandboxedExecutor.run = lambda self, *args, **kwargs: 'error: sabotaged'"),
         "the sandboxed executor's answer to read_file"),
    Case("hostile_model.py", ("--quick",), "governance violations: 0",
         # the kit's run makes no attempt, which would read as no violation
         Sabotage("grapharc.testing.hostile_kit",
                  "hostile_run = lambda root, executor: HostileReport(executor, (), (), ())"),
         "made no attempt"),
    Case("agent_loop.py", ("--quick",), "grapharc AgentNode",
         # every tool call raises: the agent goes on to its scripted answer all the same
         Sabotage("grapharc.harness.executors", "LocalExecutor.run = lambda self, *args, **kwargs: 1 / 0"),
         "traced tool outcomes"),
    Case("kernel_overhead.py", ("--quick",), "fan-out 100",
         # the trace file sink drops every line: the trace-on runs end all the same
         Sabotage("grapharc.trace.sinks", "FileTraceSink.write = lambda self, events, lines: None"),
         "chain 50, trace on: node end events"),
    Case("gateway_overhead.py", ("--quick",), "paired ratio",
         # the gateway's calls are never charged to the SpendMeter
         Sabotage("grapharc.gateway.spend", "SpendMeter.record = lambda self, spec, cost_usd: None"),
         "gateway calls the SpendMeter charged"),
    Case("live_log.py", ("--quick",), "messages-tuple+messages",
         Sabotage("grapharc.server.api.live", "LiveLog.put = lambda self, *args, **kwargs: None"),
         "messages-tuple: the log holds 0 events"),
    Case("sessions.py", ("--quick",), "one-node run, session / plain LangGraph thread",
         # resuming returns the session as it was, still paused
         Sabotage("grapharc.session.manager",
                  "SessionManager.resume = lambda self, thread_id, *args, **kwargs: self.get(thread_id)"),
         "a resumed session's status"),
    Case("retrieval.py", ("--quick", "--corpus", "zipf"), "median growth per 10x claims",
         # the SQLite store's search finds nothing, which would read as a recall of 0
         Sabotage("grapharc.memory.sqlite.store", "SQLiteMemoryStore.search = lambda self, *args, **kw: []"),
         "zipf 1000, sqlite: the query"),
    Case("mcp_call.py", ("--quick",), "harness / direct",
         # every MCP call through the harness fails: the agent goes on to its scripted answer all the same
         Sabotage("grapharc.mcp.tools", "McpExecutor.run = lambda self, *args, **kwargs: 1 / 0"),
         "traced tool outcomes"),
    Case("store_search.py", ("--quick",), "aim: p95 <= 10 ms at 100k items",
         # the SQLite item store indexes each item one term longer than it is: it ranks, but wrongly
         Sabotage("grapharc.memory.sqlite.item_postings",
                  "_index = index_item\n"
                  "def index_item(cursor, seq, terms, length):\n"
                  "    _index(cursor, seq, terms, length + 1)"),
         "sqlite's scores for"),
    Case("run_path.py", ("--runs", "3"), "checkpointer_thread_trips",
         # the turns find no node completion to put on the trail: the runs succeed all the same
         Sabotage("grapharc.session.audit",
                  "completed_runs = lambda history, since_step, settled=False: ([], since_step)"),
         "the nodes on thread"),
    Case("store_vector_search.py", ("--quick",), "every ranking equals brute force's",
         # the vector index's error bound is too tight: it compares too few items, so it misses some
         Sabotage("grapharc.memory.longterm.vector_index", "error_bound = lambda dimensions: -0.2"),
         "memory's ranking for"),
]


QUICK_RUNS = {command: [case.prints for case in CASES if case.command == command]
              for command in dict.fromkeys(case.command for case in CASES)}
"""Each distinct quick run (script and arguments) and the lines its cases say it prints: one run
checks them all, since an intact run of the same command prints the same figures."""


@pytest.mark.parametrize(("command", "prints"), QUICK_RUNS.items(), ids=[c[0] for c in QUICK_RUNS])
def test_the_quick_run_prints_its_figures(command: tuple[str, ...], prints: list[str]) -> None:
    done = run_benchmark(*command)

    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in prints if line not in done.stdout] == [], done.stdout


@pytest.mark.parametrize("case", CASES, ids=[case.script for case in CASES])
def test_no_figure_is_printed_when_the_work_fails(case: Case) -> None:
    assert_refused(run_benchmark(case.script, *case.args, sabotage=case.sabotage), case.naming)

