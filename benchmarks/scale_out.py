"""Scale-out: runs per second of a short graph with 1, 2 and 4 ``grapharc serve`` workers on one
PostgreSQL database, against one worker on SQLite, measured in the same run.

One SQLite worker and as many PostgreSQL workers as the largest setup are launched together
(separate processes on ephemeral loopback ports, serving the three-node chain of server_load.py
with no work in its nodes) and each is warmed with one run. Each setup then uses the first N
workers of its store: ``--clients`` client tasks share ``--runs`` runs, and run i creates its
thread on worker i mod N and runs it with ``POST /threads/{id}/runs/wait`` on worker i+1 mod N,
so with several workers every run crosses from one to another. Latency is from sending the run
to receiving its final values. Afterwards every thread's audit trail is read from the store: a
run is lost when its thread did not complete with each node recorded, and run twice when a node
is recorded more than once or the thread was claimed more than once.

Where the time goes, per run: CPU seconds spent in the workers (their /proc stat), in the
PostgreSQL backends serving the benchmark's database (found by pid in pg_stat_activity, read the
same way) and in this client. With C cores that CPU bounds the rate at C / (CPU seconds per run):
the table prints the bound beside what was measured. PostgreSQL's transactions and rows written
per run (pg_stat_database), and each table's rows written and scans (pg_stat_user_tables), are
read once the workers have exited (a backend flushes its statistics then), so they count each
worker's start-up and warm-up run too.

PostgreSQL is ``--admin`` (default ``$GRAPHARC_TEST_POSTGRES``, else the trust-auth server at
127.0.0.1:5432); a fresh database ``grapharc_bench_<hex>`` is made for the run and dropped at the
end. Loopback only, bounded: a fixed number of runs per setup, each request gives up after
``--timeout`` seconds, the workers are stopped (SIGTERM) at the end. Exit status 1, and no
figure printed, if a run failed, was lost or ran twice (the first failures are named).

    .venv/bin/python benchmarks/scale_out.py [--runs N] [--clients C] [--workers 1,2,4] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import psycopg
from _arguments import Count, Counts, Positive, PostgresConninfo, benchmark_parser
from _checked import WorkFailed, checked_main
from psycopg import sql
from server_load import GRAPH, announced_url, launch_server, percentile

from grapharc.postgres.cli import upgrade_store
from grapharc.stores import open_store, store_uri

NODES = ("first", "second", "third")
ADMIN = os.environ.get("GRAPHARC_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
PATIENCE_SECONDS = 60


@dataclass
class Phase:
    """One setup's figures: throughput, latency, correctness and CPU per run."""

    store: str
    workers: int
    runs: int
    seconds: float
    latencies_ms: list[float] = field(repr=False)
    failed: list[str]
    threads: list[str] = field(repr=False)
    worker_cpu_s: float
    client_cpu_s: float
    database_cpu_s: float | None
    lost: int = 0
    twice: int = 0

    def figures(self, cores: int) -> dict[str, Any]:
        """The row this phase adds to the table."""
        cpu = self.worker_cpu_s + self.client_cpu_s + (self.database_cpu_s or 0.0)
        per_run = (lambda total: round(total / self.runs * 1000, 2)) if self.runs else (lambda _: 0.0)
        return {
            "store": self.store, "workers": self.workers, "runs": self.runs,
            "runs_per_s": round(self.runs / self.seconds, 2),
            "p50_ms": round(percentile(self.latencies_ms, 0.50), 1),
            "p99_ms": round(percentile(self.latencies_ms, 0.99), 1),
            "failed": len(self.failed), "lost": self.lost, "run_twice": self.twice,
            "worker_cpu_ms_per_run": per_run(self.worker_cpu_s),
            "database_cpu_ms_per_run": None if self.database_cpu_s is None else per_run(self.database_cpu_s),
            "client_cpu_ms_per_run": per_run(self.client_cpu_s),
            "cpu_bound_runs_per_s": round(cores * self.runs / cpu, 1) if cpu else None,
        }


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds process ``pid`` has used (all its threads), None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_of(pids: list[int]) -> dict[int, float]:
    """CPU seconds of each process in ``pids`` still running."""
    return {pid: used for pid in pids if (used := cpu_seconds(pid)) is not None}


def cpu_spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (a process that started in between counts from 0)."""
    return sum(used - before.get(pid, 0.0) for pid, used in after.items())


# -- PostgreSQL -------------------------------------------------------------------------------


@contextmanager
def fresh_database(admin: str) -> Iterator[str]:
    """A new database on ``admin``'s server for this run, as a store URI; dropped at the end."""
    name = f"grapharc_bench_{uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


class DatabaseWatch:
    """What PostgreSQL did for one database: its backends' CPU, its transactions and rows written."""

    def __init__(self, admin: str, uri: str) -> None:
        self.uri = uri
        self.name = uri.rsplit("/", 1)[1]
        self.conn = psycopg.connect(admin, autocommit=True, connect_timeout=5)

    def backends(self) -> list[int]:
        rows = self.conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.name,))
        return [int(pid) for (pid,) in rows]

    def totals(self) -> dict[str, Any]:
        """Transactions and rows written so far, and each table's rows written and scans, once every
        backend of the database has exited (a backend flushes its statistics when it exits)."""
        deadline = time.monotonic() + PATIENCE_SECONDS
        while self.backends() and time.monotonic() < deadline:
            time.sleep(0.05)
        row = self.conn.execute(
            "SELECT xact_commit + xact_rollback, tup_inserted + tup_updated + tup_deleted "
            "FROM pg_stat_database WHERE datname = %s", (self.name,)).fetchone()
        if row is None:
            raise WorkFailed(f"pg_stat_database has no row for {self.name}")
        with psycopg.connect(self.uri, autocommit=True, connect_timeout=5) as conn:
            tables = {name: {"rows_written": int(written), "scans": int(scans)} for name, written, scans in
                      conn.execute("SELECT relname, n_tup_ins + n_tup_upd + n_tup_del, "
                                   "coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables "
                                   "ORDER BY relname")}
        return {"transactions": int(row[0]), "rows_written": int(row[1]), "tables": tables}

    def close(self) -> None:
        self.conn.close()


# -- workers and runs ----------------------------------------------------------------------------


@dataclass
class Worker:
    """One ``grapharc serve`` process and the URL it announced."""

    process: subprocess.Popen[str]
    url: str


@contextmanager
def workers(work: Path, stores: list[str]) -> Iterator[list[Worker]]:
    """One worker per session store in ``stores``, launched together (start-up dominates on a busy
    machine) and stopped (SIGTERM) at the end."""
    launched: list[subprocess.Popen[str]] = []
    try:
        launched = [launch_server(work, 0.0, sessions) for sessions in stores]
        yield [Worker(process, announced_url(process)) for process in launched]
    finally:
        for process in launched:
            process.send_signal(signal.SIGTERM)
        for process in launched:
            process.wait(timeout=PATIENCE_SECONDS)


class RunFailed(Exception):
    """A run whose request did not end in the chain's final values."""


async def one_run(client: httpx.AsyncClient, create_on: str, run_on: str, threads: list[str]) -> float:
    """Create a thread on one worker, run it to its end on another; the run's milliseconds."""
    created = await client.post(f"{create_on}/threads", json={"metadata": {"graph_id": GRAPH}})
    if created.status_code != 200:
        raise RunFailed(f"POST /threads answered {created.status_code}: {created.text[:200]}")
    thread = created.json()["thread_id"]
    threads.append(thread)
    began = time.monotonic()
    body = {"assistant_id": GRAPH, "input": {}}
    done = await client.post(f"{run_on}/threads/{thread}/runs/wait", json=body)
    elapsed = (time.monotonic() - began) * 1000
    if done.status_code != 200 or done.json().get("count") != len(NODES):
        raise RunFailed(f"thread {thread}: runs/wait answered {done.status_code}: {done.text[:200]}")
    return elapsed


async def drive(urls: list[str], runs: int, clients: int, timeout: float,
                threads: list[str]) -> tuple[list[float], list[str]]:
    """``runs`` runs spread over ``urls`` by ``clients`` client tasks: latencies and failures."""
    latencies: list[float] = []
    failed: list[str] = []
    numbers = iter(range(runs))
    limits = httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients * 2)

    async def client_task(client: httpx.AsyncClient) -> None:
        for i in numbers:  # shared by the tasks: each takes the next run
            try:
                latencies.append(await one_run(client, urls[i % len(urls)], urls[(i + 1) % len(urls)],
                                               threads))
            except (httpx.HTTPError, RunFailed) as exc:
                failed.append(f"{type(exc).__name__}: {exc}")

    async with httpx.AsyncClient(timeout=timeout, limits=limits) as client:
        await asyncio.gather(*(client_task(client) for _ in range(clients)))
    return latencies, failed


def audit_tally(sessions: str, phase: Phase) -> None:
    """Count the phase's runs lost and run twice, from each thread's audit trail."""
    store = open_store(store_uri(sessions, "sessions"), kind="sessions")
    try:
        for thread in phase.threads:
            trail = store.audit(thread)
            nodes = Counter(entry.node for entry in trail if entry.kind == "node")
            claims = sum(entry.kind == "claimed" for entry in trail)
            if claims > 1 or any(nodes[node] > 1 for node in NODES):
                phase.twice += 1
            elif not any(entry.kind == "completed" for entry in trail) or not all(nodes[n] for n in NODES):
                phase.lost += 1
    finally:
        store.close()


def run_phase(store: str, started: list[Worker], args: argparse.Namespace,
              watch: DatabaseWatch | None) -> Phase:
    """Time ``args.runs`` runs spread over the ``started`` workers; the CPU each side spent on them."""
    threads: list[str] = []
    pids = [worker.process.pid for worker in started]
    worker_cpu, client_cpu = cpu_of(pids), time.process_time()
    database_cpu = cpu_of(watch.backends()) if watch else {}
    began = time.monotonic()
    latencies, failed = asyncio.run(drive([w.url for w in started], args.runs, args.clients, args.timeout,
                                          threads))
    seconds = time.monotonic() - began
    client_spent = time.process_time() - client_cpu
    worker_spent = cpu_spent(worker_cpu, cpu_of(pids))
    database_spent = cpu_spent(database_cpu, cpu_of(watch.backends())) if watch else None
    return Phase(store, len(started), args.runs, seconds, latencies, failed, threads, worker_spent,
                 client_spent, database_spent)


# -- report ---------------------------------------------------------------------------------------


COLUMNS = (("store", "store"), ("workers", "workers"), ("runs", "runs"), ("runs_per_s", "runs/s"),
           ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"), ("failed", "failed"), ("lost", "lost"),
           ("run_twice", "twice"), ("worker_cpu_ms_per_run", "worker cpu ms/run"),
           ("database_cpu_ms_per_run", "pg cpu ms/run"), ("client_cpu_ms_per_run", "client cpu ms/run"),
           ("cpu_bound_runs_per_s", "cpu bound runs/s"))


def ratios(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Each PostgreSQL setup's rate over one PostgreSQL worker's, and one PostgreSQL worker over SQLite."""
    rate = {(row["store"], row["workers"]): row["runs_per_s"] for row in rows}
    found: dict[str, float] = {}
    base = rate.get(("postgres", 1))
    for (store, count), value in rate.items():
        if store == "postgres" and count > 1 and base:
            found[f"postgres x{count} / postgres x1"] = round(value / base, 2)
    if base and rate.get(("sqlite", 1)):
        found["postgres x1 / sqlite x1"] = round(base / rate[("sqlite", 1)], 2)
    return found


def per_postgres_run(totals: dict[str, Any], runs: int) -> dict[str, Any]:
    """PostgreSQL's totals divided by the runs it served; tables untouched are left out."""
    def share(count: int) -> float:
        return round(count / runs, 1)

    return {"transactions": share(totals["transactions"]), "rows_written": share(totals["rows_written"]),
            "tables": {name: {what: share(count) for what, count in table.items()}
                       for name, table in totals["tables"].items() if any(table.values())}}


def render(rows: list[dict[str, Any]], found: dict[str, float], per_run: dict[str, Any], cores: int) -> str:
    table = [[title for _, title in COLUMNS]]
    table += [["-" if row[key] is None else str(row[key]) for key, _ in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(line, widths, strict=True)) for line in table]
    lines.append("")
    lines += [f"{name}: {value}" for name, value in found.items()]
    lines.append(f"postgres per run: {per_run['transactions']} transactions, {per_run['rows_written']} rows "
                 "written (over every PostgreSQL run, counting each worker's start-up and warm-up run)")
    lines += [f"  {name}: {table['rows_written']} rows written, {table['scans']} scans"
              for name, table in per_run["tables"].items()]
    lines.append(f"cores: {cores}; cpu bound runs/s = cores / (worker + pg + client CPU seconds per run)")
    return "\n".join(lines)


def warm(started: list[Worker], timeout: float) -> list[str]:
    """One run on each worker (imports, pools, first compile), so phases time steady work; failures."""
    return [failure for worker in started
            for failure in asyncio.run(drive([worker.url], 1, 1, timeout, []))[1]]


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Count(1, 100_000), default=200, help="timed runs per setup")
    parser.add_argument("--clients", type=Count(1, 1_000), default=8, help="concurrent client tasks")
    parser.add_argument("--workers", type=Counts(1, 64),
                        help="worker counts on PostgreSQL, comma-separated (default 1,2,4)")
    parser.add_argument("--timeout", type=Positive(), default=60.0, help="seconds before a request gives up")
    parser.add_argument("--admin", type=PostgresConninfo(), default=ADMIN,
                        help="PostgreSQL URI allowed to create databases")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON document")
    parser.add_argument("--quick", action="store_true", help="4 runs by 2 clients (on 1 and 2 workers)")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.clients = 4, 2
    counts = args.workers or ([1, 2] if args.quick else [1, 2, 4])
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="grapharc-scale-") as tmp, fresh_database(args.admin) as uri:
        work, folder = Path(tmp), str(Path(tmp) / "sessions")
        upgrade_store(uri)  # once, before any worker starts, as the deploy guide says
        watch = DatabaseWatch(args.admin, uri)
        try:
            with workers(work, [folder, *[uri] * max(counts)]) as started:
                failures = warm(started, args.timeout)
                if failures:
                    raise WorkFailed(f"a worker's warm-up run failed: {failures[0]}")
                phases = [run_phase("sqlite", started[:1], args, None)]
                phases += [run_phase("postgres", started[1:1 + count], args, watch) for count in counts]
            totals = watch.totals()
        finally:
            watch.close()
        for phase in phases:
            audit_tally(folder if phase.store == "sqlite" else uri, phase)
    per_run = per_postgres_run(totals, sum(p.runs + p.workers for p in phases if p.store == "postgres"))
    rows = [phase.figures(cores) for phase in phases]
    found = ratios(rows)
    failures = [failure for phase in phases for failure in phase.failed]
    failures += [f"{phase.store} x{phase.workers}: {phase.lost} run(s) lost, {phase.twice} run twice"
                 for phase in phases if phase.lost or phase.twice]
    if failures:
        raise WorkFailed(f"{len(failures)} failure(s), the first: " + "; ".join(failures[:5]))
    if args.json:
        print(json.dumps({"cores": cores, "clients": args.clients, "setups": rows, "ratios": found,
                          "postgres_per_run": per_run, "failures": []}, indent=2))
    else:
        print(render(rows, found, per_run, cores))
    return 0


if __name__ == "__main__":
    checked_main(main)
