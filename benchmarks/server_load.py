"""The threads API under load: concurrent SSE clients and a target rate of runs against one server.

One ``grapharc serve`` on 127.0.0.1 (sessions in a temporary directory; ``--workers N``
processes, one by default) drives a short registered graph (three nodes in a chain, each
sleeping ``--node-seconds``). ``--clients`` client tasks (in 20 groups, each sharing a connection
pool) share a schedule of runs paced at ``--rate`` runs/s for ``--duration`` seconds; each takes
the next run due, creates a thread, streams the run in the ``events`` mode to its end, then
reads the thread's trace. Per run it counts events lost (a trace entry of the run the stream
never sent), duplicated (an id sent twice) and out of order; per event, the latency from the
trace write (the event's ``metadata.at``) to the client's receipt. Reported: runs done and their rate, lost /
duplicated / out-of-order events (the goal is 0, 0, 0), p50 / p99 / max latency (also per kind
of trace entry, which shows where in a turn events wait), the most streams open at once, the
server's RSS before and after the load and its CPU time per run (both summed over its
processes), the machine's load average, and the setup's own bound on the rate (a run holds a
client for its whole length and one of the server's node threads while a node sleeps: below the
target, the setup rather than the server caps it). The baseline, measured first in the same run: CPU
time per run of the same chain in plain LangGraph with a SQLite checkpointer (no server, stream
or trace), and the server's CPU per run as a ratio to it.

``--vs langgraph-dev`` runs the same load against ``grapharc serve`` and then against LangGraph's own
server, ``langgraph dev`` (from a virtualenv of its own, serving the chain's plain LangGraph twin: see
langgraph_dev.py), with a client both speak: each run creates a thread and streams the run in the
``updates`` mode to its end. Printed side by side: runs/s, server CPU ms per run (the server's
process tree's own CPU time), p50 / p99 of a run's length as the client saw it, the seconds
from launching the server to its first healthy answer (ours: ``/healthz``, which answers while
the graphs load; theirs: ``/ok``) and to its being ready (ours: ``/readyz``; theirs: ``/ok`` again,
which answers once its graphs are loaded), each with the CPU seconds the server had used by then
(steadier than the wall time on a shared machine), and the ratio ours / theirs of those figures.
Each server is launched once untimed first, so both start with their bytecode cached. ``--rounds N``
launches and loads the two N times, alternating (ours, theirs, ours, theirs...), since one pair on
a shared machine swings either way: the table then gives each figure's median over the rounds, and
below it each round's server CPU ms per run on both and their ratio, with the median, least and
greatest of those ratios. If any run
failed, or an event was lost, on either server, no figure is printed and the failure is named
(exit 1): a figure of a load that did not all run compares nothing.

Loopback only, bounded: the schedule ends after ``--duration`` seconds, each request gives up
after ``--timeout`` seconds, and the server is stopped (SIGTERM) when the load ends. Exit
status 1, and no figure printed, if a scheduled run did not run or did not succeed, or any
event was lost, duplicated or out of order.

    .venv/bin/python benchmarks/server_load.py [--clients N] [--rate R] [--duration S] [--workers N]
        [--vs langgraph-dev [--rounds N]] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _arguments import Count, Positive, benchmark_parser
from _checked import WorkFailed, checked_main, expect
from langgraph_dev import cached_bytecode

GRAPH = "bench-chain"
NODES = 3
"""Nodes in a run of the benchmark's chain, one after the other."""
SERVER_THREADS = 64  # grapharc serve's default
CLIENT_POOLS = 20
"""Connection pools the client tasks share (see ``load``)."""

REGISTRY = textwrap.dedent('''
    """The load benchmark's graph: three nodes in a chain, each adding one to a counter after
    BENCH_NODE_SECONDS of work (a sleep, so runs overlap as real ones would)."""

    import os
    import time

    from grapharc.runtime.graph import END, START, GraphARC
    from grapharc.runtime.state import GraphARCState


    class ChainState(GraphARCState):
        count: int = 0


    def step(state: ChainState) -> dict[str, int]:
        time.sleep(float(os.environ["BENCH_NODE_SECONDS"]))
        return {"count": state.count + 1}


    def register(manager):
        chain = GraphARC(ChainState, name="bench-chain")
        for name in ("first", "second", "third"):
            chain.add_node(name, step, writes={"count"})
        chain.add_edge(START, "first")
        chain.add_edge("first", "second")
        chain.add_edge("second", "third")
        chain.add_edge("third", END)
        manager.register(chain)
''')


@dataclass
class Tally:
    """What the clients saw, summed over runs."""

    runs: int = 0
    failed: list[str] = field(default_factory=list)
    events: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    latencies_by_entry: dict[str, list[float]] = field(default_factory=dict)
    open_streams: int = 0
    most_open: int = 0


def rss_kib(pid: int) -> int:
    """The resident set size of process ``pid`` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/{pid}/status has no VmRSS line")


def cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) process ``pid`` has used so far, in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def launch_server(work: Path, node_seconds: float, sessions: str,
                  threads: int = SERVER_THREADS, workers: int = 1, port: int = 0,
                  wrapper: list[str] | None = None) -> subprocess.Popen[str]:
    """``grapharc serve --threads --workers`` on a loopback port (ephemeral by default) with the
    benchmark's graph (its module written to ``work``) over the session store ``sessions`` (a folder
    or a URI), run by ``wrapper`` when given (``valgrind ...``: the command comes after it)."""
    (work / "bench_graphs.py").write_text(REGISTRY)
    command = [*(wrapper or []), sys.executable, "-m", "grapharc.cli", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--json", "--sessions", sessions, "--registry", "bench_graphs:register",
               "--threads", str(threads), "--workers", str(workers)]
    search_path = os.pathsep.join(filter(None, [str(work), os.environ.get("PYTHONPATH")]))  # kept: A/B runs
    env = {**cached_bytecode(os.environ), "PYTHONPATH": search_path, "BENCH_NODE_SECONDS": str(node_seconds)}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


def announcement(server: subprocess.Popen[str]) -> dict[str, Any]:
    """The document a launched server announces once it listens."""
    assert server.stdout is not None
    text = ""
    while True:
        line = server.stdout.readline()
        if not line:
            raise RuntimeError("the server exited before announcing its address")
        text += line
        try:
            return dict(json.loads(text))
        except json.JSONDecodeError:
            continue


def announced_url(server: subprocess.Popen[str]) -> str:
    """The URL a launched server announces once it listens."""
    return str(announcement(server)["url"])


def server_pids(announced: dict[str, Any]) -> list[int]:
    """The server's processes: the one started, and its workers when it has several."""
    return [int(announced["pid"]), *announced.get("workers", [])]


async def one_run(client: httpx.AsyncClient, tally: Tally) -> None:
    """Create a thread, stream a run of it in the events mode, check the stream against the trace."""
    thread = (await client.post("/threads", json={"metadata": {"graph_id": GRAPH}})).json()["thread_id"]
    body = {"assistant_id": GRAPH, "input": {}, "stream_mode": ["events"]}
    received: list[str] = []
    event_id, kind = "", ""
    status = "no end event"
    tally.open_streams += 1
    tally.most_open = max(tally.most_open, tally.open_streams)
    try:
        async with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("id: "):
                    event_id = line[4:]
                elif line.startswith("data: ") and kind == "events":
                    event = json.loads(line[6:])
                    if "at" not in event["metadata"]:  # a live event (a node's start), not a trail entry
                        continue
                    late_ms = (time.time() - event["metadata"]["at"]) * 1000
                    received.append("-".join(event_id.split("-")[:2]))  # <seq>-2 (-<live cursor>)
                    tally.latencies_ms.append(late_ms)
                    tally.latencies_by_entry.setdefault(event["name"], []).append(late_ms)
                    event_id = ""
                elif line.startswith("data: ") and '"status"' in line:
                    status = json.loads(line[6:])["status"]
    finally:
        tally.open_streams -= 1
    trace = [json.loads(t) for t in (await client.get(f"/threads/{thread}/trace")).text.splitlines()]
    expected = [f"{entry['seq']}-2" for entry in trace[1:]]  # every entry after the thread's creation
    tally.runs += 1
    tally.events += len(received)
    tally.lost += len(set(expected) - set(received))
    tally.duplicated += len(received) - len(set(received))
    seqs = [int(i.split("-")[0]) for i in received]
    tally.out_of_order += sum(1 for a, b in itertools.pairwise(seqs) if b <= a)
    if status != "success":
        tally.failed.append(f"{thread}: {status}")


RunOnce = Callable[[httpx.AsyncClient, Tally], Awaitable[None]]


async def load(url: str, clients: int, rate: float, duration: float, timeout: float,
               run_once: RunOnce = one_run) -> tuple[Tally, float]:
    """Run the schedule with ``clients`` client tasks, each run by ``run_once``; the tally and the
    seconds it took."""
    due: asyncio.Queue[float | None] = asyncio.Queue()
    tally = Tally()
    # the client tasks share CLIENT_POOLS connection pools: one pool for all 200 costs the client
    # more CPU per request the more requests are in flight (httpx matches each against every
    # connection), so a client falling behind fell further (27 to 31 ms of client CPU per run at the
    # full target against 6 to 10 keeping up); a pool per task opened a new connection per run.
    # Idle connections are dropped before the server's 5 s keep-alive ends, so a request never
    # races the server closing the connection it was sent on.
    pools = min(CLIENT_POOLS, clients)
    per_pool = -(-clients // pools)
    limits = httpx.Limits(max_connections=per_pool * 2, max_keepalive_connections=per_pool * 2,
                          keepalive_expiry=2.0)

    async def schedule() -> None:
        start = time.monotonic()
        for i in range(int(rate * duration)):
            await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
            due.put_nowait(time.monotonic())
        for _ in range(clients):
            due.put_nowait(None)

    async def client_task(client: httpx.AsyncClient) -> None:
        while await due.get() is not None:
            try:
                await run_once(client, tally)
            except httpx.HTTPError as exc:
                request = exc.request if isinstance(exc, httpx.RequestError) else None
                where = f" on {request.method} {request.url.path}" if request is not None else ""
                tally.failed.append(f"{type(exc).__name__}{where}: {exc}")

    async with contextlib.AsyncExitStack() as stack:
        shared = [await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=timeout,
                                                                    limits=limits))
                  for _ in range(pools)]
        began = time.monotonic()
        await asyncio.gather(schedule(), *(client_task(shared[i % pools]) for i in range(clients)))
        return tally, time.monotonic() - began


def check_tally(tally: Tally, args: argparse.Namespace, server: str) -> None:
    """``WorkFailed`` unless every scheduled run ran and succeeded, each event streamed once, in order."""
    scheduled = int(args.rate * args.duration)
    wrong = [f"{len(tally.failed)} run(s) failed, the first: {tally.failed[0]}"] if tally.failed else []
    wrong += [f"{tally.runs} of {scheduled} scheduled runs ran"] if tally.runs != scheduled else []
    wrong += [f"events lost {tally.lost}, duplicated {tally.duplicated}, out of order {tally.out_of_order}"
              ] if tally.lost or tally.duplicated or tally.out_of_order else []
    if wrong:
        raise WorkFailed(f"{server}: " + "; ".join(wrong))


def plain_langgraph_cpu_ms(directory: Path, runs: int = 200) -> float:
    """The baseline, measured in the same run: CPU ms per run of the same three-node chain in plain
    LangGraph (no nodes' sleep, no server, no trace) checkpointing to a SQLite file, as the server's
    session store does, with ``durability="sync"`` as its turns run."""
    import sqlite3
    from typing import TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    class Chain(TypedDict):
        count: int

    def step(state: Chain) -> dict[str, int]:
        return {"count": state["count"] + 1}

    builder = StateGraph(Chain)
    for name in ("first", "second", "third"):
        builder.add_node(name, step)
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", "third")
    builder.add_edge("third", END)
    connection = sqlite3.connect(directory / "plain.db", check_same_thread=False)
    try:
        graph = builder.compile(checkpointer=SqliteSaver(connection))
        began = time.process_time()
        for run in range(runs):
            graph.invoke({"count": 0}, {"configurable": {"thread_id": f"t{run}"}}, durability="sync")
        return (time.process_time() - began) * 1000 / runs
    finally:
        connection.close()


def setup_bound(args: argparse.Namespace) -> float | None:
    """The most runs/s the setup allows before the server does any work: each run holds a client
    for its whole length and a node thread (of ``--threads`` per worker) while a node sleeps (None:
    nodes that do not sleep set no such bound)."""
    run_seconds = NODES * args.node_seconds
    if run_seconds <= 0:
        return None
    return round(min(args.clients, args.threads * args.workers) / run_seconds, 1)


def percentile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (nearest rank), 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=Count(1, 10_000), default=20, help="concurrent SSE client tasks")
    parser.add_argument("--rate", type=Positive(10_000), default=5.0, help="target runs per second")
    parser.add_argument("--duration", type=Positive(), default=20.0, help="seconds of scheduled runs")
    parser.add_argument("--node-seconds", type=Positive(3_600), default=0.3,
                        help="each node's work (a sleep)")
    parser.add_argument("--timeout", type=Positive(), default=60.0, help="seconds before a request gives up")
    parser.add_argument("--threads", type=Count(1, 1_024), default=SERVER_THREADS,
                        help="the server's --threads")
    parser.add_argument("--workers", type=Count(1, 256), default=1, help="the server's --workers (processes)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    parser.add_argument("--vs", choices=["langgraph-dev"],
                        help="run the same load against langgraph dev too and print both side by side")
    parser.add_argument("--rounds", type=Count(1, 1_000), default=1,
                        help="with --vs: rounds of the two servers, alternating")
    args = parser.parse_args()
    if args.rounds > 1 and not args.vs:
        parser.error("argument --rounds: alternates two servers, so only with --vs langgraph-dev")
    if args.vs:
        return versus_langgraph_dev(args)
    with tempfile.TemporaryDirectory(prefix="grapharc-load-") as tmp:
        plain_ms = plain_langgraph_cpu_ms(Path(tmp))
        server = launch_server(Path(tmp), args.node_seconds, str(Path(tmp) / "sessions"), args.threads,
                               args.workers)
        announced = announcement(server)
        url, pids = str(announced["url"]), server_pids(announced)
        try:
            rss_before, cpu_before = sum(map(rss_kib, pids)), sum(map(cpu_seconds, pids))
            load_before = os.getloadavg()[0]
            client_began = time.process_time()
            tally, seconds = asyncio.run(load(url, args.clients, args.rate, args.duration, args.timeout))
            client_ms = (time.process_time() - client_began) * 1000 / max(tally.runs, 1)
            rss_after, cpu_after = sum(map(rss_kib, pids)), sum(map(cpu_seconds, pids))
            load_after = os.getloadavg()[0]
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=args.timeout)
    check_tally(tally, args, "grapharc serve")
    figures: dict[str, Any] = {
        "clients": args.clients, "threads": args.threads, "workers": args.workers,
        "node_seconds": args.node_seconds,
        "target_runs_per_s": args.rate,
        "duration_s": args.duration,
        "runs": tally.runs, "runs_per_s": round(tally.runs / seconds, 2), "failed_runs": len(tally.failed),
        "events": tally.events, "lost": tally.lost, "duplicated": tally.duplicated,
        "out_of_order": tally.out_of_order, "most_open_streams": tally.most_open,
        "latency_p50_ms": round(percentile(tally.latencies_ms, 0.50), 1),
        "latency_p99_ms": round(percentile(tally.latencies_ms, 0.99), 1),
        "latency_max_ms": round(max(tally.latencies_ms, default=0.0), 1),
        "latency_mean_ms": round(statistics.fmean(tally.latencies_ms), 1) if tally.latencies_ms else 0.0,
        "server_rss_before_mib": round(rss_before / 1024, 1),
        "server_rss_after_mib": round(rss_after / 1024, 1),
        "server_cpu_ms_per_run": round(server_ms := (cpu_after - cpu_before) * 1000 / max(tally.runs, 1), 1),
        "client_cpu_ms_per_run": round(client_ms, 1),
        "plain_langgraph_cpu_ms_per_run": round(plain_ms, 2),
        "server_cpu_per_run_ratio_to_plain_langgraph": round(server_ms / plain_ms, 1),
        "load_average_1m_before": round(load_before, 2), "load_average_1m_after": round(load_after, 2),
        "setup_bound_runs_per_s": (bound := setup_bound(args)),
        "latency_p50_p99_ms_by_entry": {name: [round(percentile(values, 0.50), 1),
                                               round(percentile(values, 0.99), 1)]
                                        for name, values in sorted(tally.latencies_by_entry.items())},
    }
    if bound is not None and bound < args.rate:
        print(f"note: this setup allows at most {bound} runs/s of the "
              f"{args.rate:g} asked (more --clients, or --threads x --workers, lift it)", file=sys.stderr)
    if args.json:
        print(json.dumps({**figures, "failures": []}, indent=2))
    else:
        width = max(map(len, figures))
        for name, value in figures.items():
            print(f"{name:<{width}}  {value}")
    return 0


# -- --vs langgraph-dev ------------------------------------------------------------------------------

def process_tree(pid: int) -> list[int]:
    """``pid`` and every process descended from it (Linux /proc), so a server's workers count."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            children[int(stat.read_text().rpartition(")")[2].split()[1])].append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        tree.append(current := todo.pop())
        todo.extend(children.get(current, []))
    return tree


def tree_cpu_seconds(pid: int) -> float:
    """The CPU time ``pid`` and its descendants have used so far, in seconds (those that exited
    while the load ran are not counted: neither server starts processes per run)."""
    total = 0.0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            total += cpu_seconds(member)
    return total


async def portable_run(client: httpx.AsyncClient, tally: Tally) -> None:
    """A run both servers serve the same way: create a thread, stream a run of it in the updates
    mode to the stream's end; its length (from creating the thread) is the run's latency."""
    began = time.monotonic()
    thread = (await client.post("/threads", json={"metadata": {"graph_id": GRAPH}})).json()["thread_id"]
    body = {"assistant_id": GRAPH, "input": {}, "stream_mode": ["updates"]}
    kinds: list[str] = []
    async with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                kinds.append(line[7:].strip())
    tally.runs += 1
    tally.events += len(kinds)
    tally.latencies_ms.append((time.monotonic() - began) * 1000)
    if kinds.count("updates") != NODES or "error" in kinds:
        tally.failed.append(f"{thread}: events {kinds}")


WARM_UP_RUNS = 4
"""Runs each server serves, two at a time, after it is ready and before its CPU is counted: what a
server does once (building its routes on first match, importing what a first run needs) is
start-up, not a run's cost, on either side."""


def measure_server(url: str, pid: int, started: dict[str, float], args: argparse.Namespace) -> dict[str, Any]:
    """The portable load against the server at ``url`` (process ``pid``, which has just answered that
    it is ready; ``started``: the start-up figures so far), after ``WARM_UP_RUNS`` uncounted runs,
    and its figures."""
    cpu_ready = tree_cpu_seconds(pid)
    warm, _ = asyncio.run(load(url, 2, 2.0, WARM_UP_RUNS / 2.0, args.timeout, portable_run))
    expect(warm.runs == WARM_UP_RUNS and not warm.failed,
           f"{url}: {warm.runs} of {WARM_UP_RUNS} warm-up runs ran, failed: {warm.failed[:1]}")
    cpu_before = tree_cpu_seconds(pid)
    tally, seconds = asyncio.run(load(url, args.clients, args.rate, args.duration, args.timeout,
                                      portable_run))
    cpu_ms = (tree_cpu_seconds(pid) - cpu_before) * 1000 / max(tally.runs, 1)
    check_tally(tally, args, url)
    return {"runs": tally.runs, "failed_runs": len(tally.failed),
            "runs_per_s": round(tally.runs / seconds, 2),
            "server_cpu_ms_per_run": round(cpu_ms, 1),
            "run_latency_p50_ms": round(percentile(tally.latencies_ms, 0.50), 1),
            "run_latency_p99_ms": round(percentile(tally.latencies_ms, 0.99), 1),
            **{name: round(value, 2) for name, value in started.items()},
            "cpu_to_ready_s": round(cpu_ready, 2), "failures": tally.failed[:5]}


SERVERS = ("grapharc serve", "langgraph dev")
"""The two servers ``--vs`` compares, ours first, by the names its report gives them."""
RATIOS = ("server_cpu_ms_per_run", "launch_to_healthy_s", "cpu_to_healthy_s", "launch_to_ready_s",
          "cpu_to_ready_s")
"""The figures printed as a ratio, ``grapharc serve``'s over ``langgraph dev``'s (below 1: ours is less)."""


def started_ours(url: str, server: subprocess.Popen[str], began: float) -> dict[str, float]:
    """Seconds from ``began`` (the launch) until ``grapharc serve`` answered ``/healthz`` (the process
    is up: it answers while still loading) and the CPU it had used by then, and until ``/readyz``
    answered 200 (graphs and stores loaded: runs can be served)."""
    from langgraph_dev import wait_healthy

    healthy = wait_healthy(f"{url}/healthz", server, began)
    cpu = tree_cpu_seconds(server.pid)
    return {"launch_to_healthy_s": healthy, "cpu_to_healthy_s": cpu,
            "launch_to_ready_s": wait_healthy(f"{url}/readyz", server, began)}


def measured_ours(work: Path, args: argparse.Namespace, label: str, *, measure: bool) -> dict[str, Any]:
    """Launch ``grapharc serve`` (its sessions in ``work/sessions-label``) and, when ``measure``, time
    its start and load it; its figures (none when not measured)."""
    from langgraph_dev import free_port

    port = free_port()
    began = time.monotonic()
    server = launch_server(work, args.node_seconds, str(work / f"sessions-{label}"), args.threads,
                           args.workers, port)
    try:
        url = f"http://127.0.0.1:{port}"
        started = started_ours(url, server, began)
        return measure_server(url, server.pid, started, args) if measure else {}
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=args.timeout)


def measured_theirs(work: Path, args: argparse.Namespace, label: str, *, measure: bool) -> dict[str, Any]:
    """Launch ``langgraph dev`` (its files in ``work/dev-label``) and, when ``measure``, time its start
    and load it; its figures (none when not measured)."""
    from langgraph_dev import langgraph_dev

    (work / f"dev-{label}").mkdir()
    env = {"BENCH_NODE_SECONDS": str(args.node_seconds)}
    with langgraph_dev(work / f"dev-{label}", "bench_graphs:register", [work], env) as dev:
        if not measure:
            return {}
        # its /ok answers once its graphs are loaded: healthy is ready there
        started = {"launch_to_healthy_s": dev.healthy_after_s, "cpu_to_healthy_s": tree_cpu_seconds(dev.pid),
                   "launch_to_ready_s": dev.healthy_after_s}
        return measure_server(dev.url, dev.pid, started, args)


def versus_langgraph_dev(args: argparse.Namespace) -> int:
    """The same load against grapharc serve and langgraph dev, alternating ``--rounds`` times (ours,
    theirs, ours...); both printed side by side. Each server is launched once before the rounds, so
    both start with their bytecode cached, as an installed server does (see
    ``langgraph_dev.cached_bytecode``)."""
    rounds: list[dict[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="grapharc-load-vs-") as tmp:
        work = Path(tmp)
        measured_ours(work, args, "cache", measure=False)
        measured_theirs(work, args, "cache", measure=False)
        for index in range(args.rounds):
            mine = measured_ours(work, args, str(index), measure=True)
            rounds.append({"grapharc serve": mine,
                           "langgraph dev": measured_theirs(work, args, str(index), measure=True)})
    settings = {"clients": args.clients, "target_runs_per_s": args.rate, "duration_s": args.duration,
                "node_seconds": args.node_seconds, "rounds": args.rounds,
                "load_average_1m_after": round(os.getloadavg()[0], 2)}
    print(side_by_side(rounds, settings, as_json=args.json))
    return 0


def medians(rounds: list[dict[str, dict[str, Any]]], server: str) -> dict[str, Any]:
    """``server``'s figures, each the median of the rounds' (its failures: every round's)."""
    figures = [round_[server] for round_ in rounds]
    return {name: [failure for each in figures for failure in each[name]] if name == "failures"
            else median([each[name] for each in figures]) for name in figures[0]}


def median(values: list[float]) -> float:
    """The median of ``values`` to two decimals; of counts, a count (the lower middle one)."""
    if all(isinstance(value, int) for value in values):
        return statistics.median_low(values)
    return round(statistics.median(values), 2)


def cpu_ratios(rounds: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Each round's server CPU ms per run on both servers and their ratio ours / theirs (None where
    theirs was 0), and the median, least and greatest of those ratios."""
    each = [{server: round_[server]["server_cpu_ms_per_run"] for server in SERVERS} for round_ in rounds]
    ratios = [round(cpu["grapharc serve"] / cpu["langgraph dev"], 2) if cpu["langgraph dev"] else None
              for cpu in each]
    known = [ratio for ratio in ratios if ratio is not None]
    return {"rounds": [{**cpu, "ratio": ratio} for cpu, ratio in zip(each, ratios, strict=True)],
            "median": round(statistics.median(known), 2) if known else None,
            "min": min(known, default=None), "max": max(known, default=None)}


def side_by_side(rounds: list[dict[str, dict[str, Any]]], settings: dict[str, Any], *, as_json: bool) -> str:
    """The report of ``--vs``: a table, or one JSON document, of both servers' figures (each the
    median of the rounds') and their ratios, then each round's server CPU per run and the median,
    least and greatest ratio of them (``measure_server`` has refused a load any run of which failed:
    no figure is printed)."""
    figures = {server: medians(rounds, server) for server in SERVERS}
    ours, theirs = figures["grapharc serve"], figures["langgraph dev"]
    ratios = {name: round(ours[name] / theirs[name], 2) if theirs[name] else None for name in RATIOS}
    cpu = cpu_ratios(rounds)
    if as_json:
        return json.dumps({**settings, **figures, "ratio_ours_to_theirs": ratios,
                           "server_cpu_ms_per_run_by_round": cpu, "rounds": rounds}, indent=2)
    shown = [name for name in ours if name != "failures"]
    width = max(map(len, shown))
    lines = [f"{'':<{width}}  {'grapharc serve':>14}  {'langgraph dev':>14}  {'ours/theirs':>11}"]
    lines += [f"{name:<{width}}  {ours[name]:>14}  {theirs[name]:>14}  {_ratio_text(ratios, name):>11}"
              for name in shown]
    lines.append("  ".join(f"{name}={value}" for name, value in settings.items()))
    lines += [f"round {index}: server CPU ms per run {each['grapharc serve']} against "
              f"{each['langgraph dev']} ({each['ratio']}x)" for index, each in enumerate(cpu["rounds"], 1)]
    lines.append(f"server CPU per run, ours / theirs over {len(rounds)} round(s): median {cpu['median']}x, "
                 f"min {cpu['min']}x, max {cpu['max']}x")
    lines += [f"note: {name} kept up with {served['runs_per_s']} of the {settings['target_runs_per_s']} "
              "runs/s asked, so its CPU per run includes what it spent with runs waiting in its queue: "
              "compare at a --rate both keep up with" for name, served in figures.items()
              if served["runs_per_s"] < 0.9 * settings["target_runs_per_s"]]
    return "\n".join(lines)


def _ratio_text(ratios: dict[str, float | None], name: str) -> str:
    """The ratio column of figure ``name``: blank for a figure with none, n/a where theirs was 0."""
    if name not in ratios:
        return ""
    ratio = ratios[name]
    return "n/a" if ratio is None else str(ratio)


if __name__ == "__main__":
    checked_main(main)
