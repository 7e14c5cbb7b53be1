"""What a PostgreSQL trace costs, and what LISTEN/NOTIFY buys a stream following another worker.

1. Append cost per event: the same realistic node ``end`` events written by ``TraceWriter`` to a
   JSONL file and to PostgreSQL (one INSERT per ``append``; one per batch with ``append_many``,
   which is how ``RunTraceWriter`` flushes fan-out workers' events), as microseconds per event
   and the ratio to the file writer, measured in the same run.
2. Stream delay: worker A (a separate process) runs a paced graph (``--nodes`` nodes,
   ``--pace`` seconds each) on a thread; in this process the server's SSE loop follows it, once
   woken by NOTIFY (``wait_for_change`` on the PostgreSQL store) and once polling only (the
   ``SessionManager`` fallback, every ``POLL_SECONDS``). Reported: the delay from each audit
   entry's write (its ``at``) to its receipt here, median and max.

Needs a PostgreSQL server (trust auth); a scratch database is created and dropped. Every
append must leave its events readable in the trace, worker A must exit 0, and each stream must
receive an entry for every node; otherwise the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/trace_sinks.py [--postgres postgresql://postgres@127.0.0.1:5432/postgres]
        [--events 5000] [--nodes 8] [--pace 0.1] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from _checked import checked_main, expect, expect_equal
from psycopg import sql

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.graph import END, START
from grapharc.trace import read_events
from grapharc.trace.writer import TraceWriter

BATCH = 100


class Paced(GraphARCState):
    done: int = 0


def paced_graph(nodes: int, pace: float) -> GraphARC:
    """``nodes`` nodes in a row, each taking ``pace`` seconds: a run another worker executes."""
    graph = GraphARC(Paced, name="paced")

    def step(state: Paced) -> dict[str, Any]:
        time.sleep(pace)
        return {"done": state.done + 1}

    names = [f"n{i}" for i in range(nodes)]
    for name in names:
        graph.add_node(name, step, writes={"done"})
    for a, b in zip([START, *names], [*names, END], strict=True):
        graph.add_edge(a, b)
    return graph


def events(count: int) -> list[dict[str, Any]]:
    return [{"phase": "end", "run_id": "run-1", "thread_id": "thread-1", "attempt": 1, "graph": "bench",
             "node": f"node{i % 7}", "step": i, "ts": 1.7e9 + i, "duration_ms": 12.5, "tokens": 40,
             "cost_usd": None, "state_delta": {"notes": [f"finding {i}: " + "x" * 120]}}
            for i in range(count)]


def events_in(target: str | Path) -> int:
    """Events the trace at ``target`` holds (0 for a file not written yet)."""
    if isinstance(target, Path) and not target.exists():
        return 0
    return sum(1 for _ in read_events(target))


def per_event_us(target: str | Path, batch: list[dict[str, Any]], batched: bool) -> float:
    """Microseconds per event to append ``batch`` to ``target``, once the trace is checked to
    hold every one of them."""
    before = events_in(target)
    with TraceWriter(target) as writer:
        started = time.perf_counter()
        if batched:
            for i in range(0, len(batch), BATCH):
                writer.append_many(batch[i:i + BATCH])
        else:
            for event in batch:
                writer.append(event)
        seconds = time.perf_counter() - started
    expect_equal(events_in(target) - before, len(batch),
                 f"events {'append_many' if batched else 'append'} left in the {type(writer.sink).__name__}")
    return seconds / len(batch) * 1e6


def append_costs(uri: str, count: int) -> dict[str, float]:
    batch = events(count)
    with tempfile.TemporaryDirectory() as folder:
        figures = {"file_append_us": per_event_us(Path(folder) / "a.jsonl", batch, False),
                   "file_batch_us": per_event_us(Path(folder) / "b.jsonl", batch, True)}
    figures["postgres_append_us"] = per_event_us(uri, batch, False)
    figures["postgres_batch_us"] = per_event_us(uri, batch, True)
    return figures


def stream_delays(uri: str, nodes: int, pace: float, notify: bool) -> list[float]:
    """Seconds from each audit entry's write by worker A to its receipt by this process's stream."""
    from grapharc.server.api.runbook import Run
    from grapharc.server.api.streaming import _events, cursor_of
    from grapharc.session import SessionManager

    manager = SessionManager(uri)
    manager.register(paced_graph(nodes, pace))
    if not notify:
        async def poll_only(thread_id: str, timeout: float) -> bool:
            await asyncio.sleep(timeout)  # what SessionManager does for a store that cannot tell
            return False

        manager.wait_for_change = poll_only  # type: ignore[method-assign]
    thread = manager.create("paced").thread_id
    run = Run(thread, "paced", after_seq=0)

    async def follow() -> list[float]:
        worker = subprocess.Popen([sys.executable, __file__, "--worker", uri, thread, str(nodes), str(pace)])
        ended = asyncio.create_task(asyncio.to_thread(worker.wait))
        ended.add_done_callback(lambda _: run.done.set())
        delays = []
        async for event in _events(manager, run, ["events"], cursor_of(None, run), False):
            if event["event"] == "events":
                delays.append(time.time() - json.loads(event["data"])["metadata"]["at"])
        expect_equal(await ended, 0, "worker A's exit status")
        return delays

    try:
        return asyncio.run(follow())
    finally:
        manager.close()


def worker(uri: str, thread: str, nodes: int, pace: float) -> None:
    """Worker A: run the thread's turn in this process."""
    from grapharc.session import SessionManager

    manager = SessionManager(uri)
    manager.register(paced_graph(nodes, pace))
    try:
        manager.run(thread)
    finally:
        manager.close()


def scratch_database(admin: str) -> str:
    name = f"grapharc_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin.rsplit("/", 1)[0] + "/" + name


def drop_database(admin: str, uri: str) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(uri.rsplit("/", 1)[1])))


def summary(delays: list[float], nodes: int, mode: str) -> dict[str, float]:
    """Entries, median and max delay of one stream, which must have received every node's entry."""
    expect(len(delays) >= nodes, f"the {mode} stream received {len(delays)} entries for {nodes} nodes")
    return {"entries": len(delays), "median_ms": statistics.median(delays) * 1000,
            "max_ms": max(delays) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--pace", type=float, default=0.1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="200 events, 2 nodes of 0.01 s")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        uri, thread, nodes, pace = args.worker
        worker(uri, thread, int(nodes), float(pace))
        return 0
    if args.quick:
        args.events, args.nodes, args.pace = 200, 2, 0.01
    uri = scratch_database(args.postgres)
    try:
        report: dict[str, Any] = {"events": args.events, **append_costs(uri, args.events)}
        report["postgres_append_ratio"] = report["postgres_append_us"] / report["file_append_us"]
        report["postgres_batch_ratio"] = report["postgres_batch_us"] / report["file_batch_us"]
        for mode in ("notify", "polling"):
            delays = stream_delays(uri, args.nodes, args.pace, notify=mode == "notify")
            report[mode] = summary(delays, args.nodes, mode)
    finally:
        drop_database(args.postgres, uri)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"append, {args.events} events: file {report['file_append_us']:.1f} us/event, PostgreSQL "
          f"{report['postgres_append_us']:.1f} us/event ({report['postgres_append_ratio']:.1f}x)")
    print(f"append_many by {BATCH}: file {report['file_batch_us']:.1f} us/event, PostgreSQL "
          f"{report['postgres_batch_us']:.1f} us/event ({report['postgres_batch_ratio']:.1f}x)")
    for mode in ("notify", "polling"):
        figures = report[mode]
        print(f"stream delay, {mode}: {figures['entries']} entries, median {figures['median_ms']:.1f} ms, "
              f"max {figures['max_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    checked_main(main)
