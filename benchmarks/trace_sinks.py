"""What a PostgreSQL trace costs, and what LISTEN/NOTIFY buys a stream following another worker.

1. Append cost per event: the same realistic node ``end`` events written by ``TraceWriter`` to a
   JSONL file and to PostgreSQL (one INSERT per ``append``; one per batch with ``append_many``,
   which is how ``RunTraceWriter`` flushes fan-out workers' events), as microseconds per event
   and the ratio to the file writer, measured in the same run.
2. Stream delay: worker A, a ``grapharc serve`` process of its own on the same database, executes
   runs of server_load.py's three-node chain (each node ``--pace`` seconds of sleep); this process
   queues each run in the shared run store as the server's route does and follows it with the
   server's own stream loop (``run_events``, its run worker never started), once woken by NOTIFY
   (the PostgreSQL session store's ``wait_for_change``) and once polling only (as for a store that
   cannot tell: a read every ``streaming.POLL_SECONDS``), ``--runs`` runs each. Reported: the
   delay from each node's audit entry's write (its ``at``) to its receipt here, median and max.

Needs a PostgreSQL server (trust auth); a scratch database is created and dropped. Every
append must leave its events readable in the trace, each run must end in success on worker A,
and each stream must receive the end of every node of the chain, in order; otherwise the script
exits 1 and prints no figure.

    .venv/bin/python benchmarks/trace_sinks.py [--postgres postgresql://postgres@127.0.0.1:5432/postgres]
        [--events 5000] [--pace 0.1] [--runs 5] [--quick] [--json]
"""

from __future__ import annotations

import asyncio
import json
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from _arguments import Count, Positive, PostgresConninfo, benchmark_parser
from _checked import checked_main, expect, expect_equal
from psycopg import sql
from server_load import GRAPH, announced_url, launch_server

from grapharc.postgres.cli import upgrade_store
from grapharc.runs.records import SUCCESS
from grapharc.server.api.context import open_context
from grapharc.server.api.runs import RunCreate, queue
from grapharc.server.api.streaming import run_events
from grapharc.session.registries import Registrar
from grapharc.trace import read_events
from grapharc.trace.writer import TraceWriter

BATCH = 100
CHAIN = ("first", "second", "third")
"""The nodes of server_load.py's chain, in the order a run ends them."""
MODES = ("notify", "polling")
PATIENCE_SECONDS = 60
"""How long worker A may take to stop once asked."""


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


def stream_delays(work: Path, uri: str, pace: float, runs: int) -> dict[str, list[float]]:
    """Seconds from each node's audit entry, written by worker A (a ``grapharc serve`` of its
    own), to its receipt by this process's stream of the run, over ``runs`` runs followed once
    woken by NOTIFY and ``runs`` followed polling only."""
    upgrade_store(uri)  # once, before any worker starts, as the deploy guide says
    worker_a = launch_server(work, pace, uri)
    try:
        announced_url(worker_a)
        sys.path.insert(0, str(work))  # the chain's module launch_server wrote, to register it here too
        from bench_graphs import register  # type: ignore[import-not-found]

        return {mode: follow_runs(uri, register, runs, notify=mode == "notify") for mode in MODES}
    finally:
        worker_a.send_signal(signal.SIGTERM)
        worker_a.wait(timeout=PATIENCE_SECONDS)


def follow_runs(uri: str, register: Registrar, runs: int, notify: bool) -> list[float]:
    """Queue ``runs`` runs of the chain in the shared run store, one after the other, as the
    server's route does, and follow each with the server's stream loop (``run_events``) while
    worker A executes it: this process's own run worker is never started. Without ``notify``
    the session store's NOTIFY is not listened to, as for a store that cannot tell, so the
    stream reads again every poll."""
    ctx = open_context(uri, [], registrars=[register])
    if not notify:
        ctx.manager.changes = None

    async def follow() -> list[float]:
        """The delays of one run's node entries, once the run is checked to have ended well."""
        body = RunCreate(assistant_id=GRAPH, input={}, stream_mode="events", if_not_exists="create")
        run = await queue(ctx, str(uuid.uuid4()), body, None)
        delays, nodes = [], []
        async for event in run_events(ctx, run, ["events"]):
            data = json.loads(event["data"]) if event["event"] == "events" else {}
            if data.get("event") == "on_chain_end":
                delays.append(time.time() - data["metadata"]["at"])
                nodes.append(data["name"])
        ended = ctx.runs.get(run.thread_id, run.run_id)
        expect_equal(ended.status, SUCCESS, f"worker A's run ({ended.error or 'no error'}): its status")
        expect(ended.worker != ctx.worker.name, "the run was executed by the following process")
        expect_equal(nodes, list(CHAIN), f"the nodes the {'notify' if notify else 'polling'} stream received")
        return delays

    async def follow_then_close() -> list[float]:
        try:
            return [delay for _ in range(runs) for delay in await follow()]
        finally:
            await ctx.aclose()

    return asyncio.run(follow_then_close())


def scratch_database(admin: str) -> str:
    name = f"grapharc_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin.rsplit("/", 1)[0] + "/" + name


def drop_database(admin: str, uri: str) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(uri.rsplit("/", 1)[1])))


def summary(delays: list[float]) -> dict[str, float]:
    """Entries, median and max delay of one stream (``follow_a_run`` checked it got every node)."""
    return {"entries": len(delays), "median_ms": statistics.median(delays) * 1000,
            "max_ms": max(delays) * 1000}


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--postgres", type=PostgresConninfo(), default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--events", type=Count(1, 10_000_000), default=5000)
    parser.add_argument("--pace", type=Positive(60), default=0.1)
    parser.add_argument("--runs", type=Count(1, 10_000), default=5, help="runs followed in each mode")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quick", action="store_true", help="200 events, one run of nodes of 0.02 s")
    args = parser.parse_args()
    if args.quick:
        args.events, args.pace, args.runs = 200, 0.02, 1
    if args.events < 1 or args.pace < 0 or args.runs < 1:
        parser.error("--events and --runs must be at least 1, --pace at least 0")
    uri = scratch_database(args.postgres)
    try:
        report: dict[str, Any] = {"events": args.events, **append_costs(uri, args.events)}
        report["postgres_append_ratio"] = report["postgres_append_us"] / report["file_append_us"]
        report["postgres_batch_ratio"] = report["postgres_batch_us"] / report["file_batch_us"]
        with tempfile.TemporaryDirectory(prefix="grapharc-sinks-") as work:
            delays = stream_delays(Path(work), uri, args.pace, args.runs)
        report.update({mode: summary(delays[mode]) for mode in MODES})
    finally:
        drop_database(args.postgres, uri)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"append, {args.events} events: file {report['file_append_us']:.1f} us/event, PostgreSQL "
          f"{report['postgres_append_us']:.1f} us/event ({report['postgres_append_ratio']:.1f}x)")
    print(f"append_many by {BATCH}: file {report['file_batch_us']:.1f} us/event, PostgreSQL "
          f"{report['postgres_batch_us']:.1f} us/event ({report['postgres_batch_ratio']:.1f}x)")
    for mode in MODES:
        figures = report[mode]
        print(f"stream delay, {mode}: {figures['entries']} entries, median {figures['median_ms']:.1f} ms, "
              f"max {figures['max_ms']:.1f} ms")
    return 0


if __name__ == "__main__":
    checked_main(main)
