"""The server's run path below HTTP, counted: trips to threads, snapshots prepared and CPU per run.

``grapharc serve``'s run worker (``grapharc.server.api.worker.RunWorker``), in this process over
SQLite stores in a temporary directory, drives ``--runs`` runs of server_load.py's three-node chain
(nodes that do not sleep), one after another, each queued as a request here queues one (added to
the run store, the worker woken) and streamed in the ``--mode`` (``updates`` by default: no reader
renders values; ``values``: the turn's scans read each checkpoint's values for one).
Counted per run, whatever the machine's load: the trips to the store pool
(``grapharc.stores.offload``), the trips to the async checkpointer's own thread
(``OneTripSqliteSaver``), the state snapshots LangGraph prepared (``_prepare_state_snapshot``),
and the context switches of this process's threads (``getrusage``: each wake-up of a thread a
hand-off makes is at least one; voluntary ones, a thread waiting, are counted apart); and, as
figures a loaded machine moves, this process's CPU time per run (``time.process_time``,
the worker's and the harness's: each run is created, queued and polled from a default-executor
thread, not counted as a trip, and its end awaited from the worker's ``on_end``, not polled, so the
instructions a run costs do not grow with how slowly it runs, under callgrind say). One run first,
not counted, so both sides start warm. Every run
must end ``success`` with its three nodes on the thread's trail, else no figure is printed
(exit 1).

    .venv/bin/python benchmarks/run_path.py [--runs N] [--mode updates|values] [--json]
"""

from __future__ import annotations

import asyncio
import collections
import json
import resource
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect, expect_equal
from langgraph.pregel import Pregel

from grapharc.runs.contracts import RunStore
from grapharc.runs.records import RunRecord
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.server.api.progress import Progress
from grapharc.server.api.worker import RunWorker
from grapharc.session import SessionManager
from grapharc.sqlite.one_trip_saver import OneTripSqliteSaver
from grapharc.stores import offload, open_store

GRAPH = "bench-chain"
NODES = ("first", "second", "third")


class ChainState(GraphARCState):
    count: int = 0


def _step(state: ChainState) -> dict[str, int]:
    return {"count": state.count + 1}


def _chain() -> GraphARC:
    """server_load.py's chain, its nodes not sleeping."""
    chain = GraphARC(ChainState, name=GRAPH)
    for name in NODES:
        chain.add_node(name, _step, writes={"count"})
    for a, b in zip((START, *NODES), (*NODES, END), strict=True):
        chain.add_edge(a, b)
    return chain


class Counts:
    """The calls counted while ``counting`` (trips and snapshots), by kind."""

    def __init__(self) -> None:
        self.by_kind: collections.Counter[str] = collections.Counter()
        self.counting = False

    def wrap(self, owner: Any, name: str, kind: str) -> None:
        """Count each call of ``owner.name`` (a function or a coroutine function) as ``kind``."""
        original: Callable[..., Any] = getattr(owner, name)
        counts = self

        if asyncio.iscoroutinefunction(original):
            async def counted_async(*args: Any, **kwargs: Any) -> Any:
                counts.by_kind[kind] += counts.counting
                return await original(*args, **kwargs)
            setattr(owner, name, counted_async)
        else:
            def counted(*args: Any, **kwargs: Any) -> Any:
                counts.by_kind[kind] += counts.counting
                return original(*args, **kwargs)
            setattr(owner, name, counted)


async def _one_run(manager: SessionManager, runs: RunStore, worker: RunWorker, mode: str,
                   ends: dict[str, asyncio.Future[None]]) -> None:
    """Queue a start run of a new thread, wake the worker, and wait for the run to end (told by
    ``ends``, the worker's ``on_end``); checked."""
    thread = (await asyncio.to_thread(manager.create, GRAPH)).thread_id
    now = time.time()
    run = RunRecord(run_id=uuid.uuid4().hex, thread_id=thread, assistant_id=GRAPH,
                    request={"kind": "start", "input": {}}, created_at=now, updated_at=now,
                    stream_modes=(mode,))
    ends[run.run_id] = asyncio.get_running_loop().create_future()
    await asyncio.to_thread(runs.add, run, exclusive=True)
    worker.wake()
    await ends[run.run_id]
    del ends[run.run_id]
    ended = await asyncio.to_thread(runs.get, thread, run.run_id)
    expect_equal(ended.status, "success", f"run {run.run_id}'s status")
    nodes = [entry.node for entry in await asyncio.to_thread(manager.audit, thread) if entry.kind == "node"]
    expect_equal(nodes, list(NODES), f"the nodes on thread {thread}'s trail")


async def _measure(directory: Path, count: int, mode: str, counts: Counts) -> float:
    """CPU seconds of ``count`` runs (after one uncounted), the calls counted meanwhile."""
    manager = SessionManager(directory / "sessions")
    manager.register(_chain())
    runs = open_store(f"sqlite:{directory / 'sessions'}", kind="runs")
    expect(isinstance(runs, RunStore), "the sqlite: run store")
    ends: dict[str, asyncio.Future[None]] = {}
    worker = RunWorker(manager, runs, Progress(), on_end=lambda run: ends[run.run_id].set_result(None))
    worker.start()
    try:
        await _one_run(manager, runs, worker, mode, ends)
        counts.counting = True
        started, before = time.process_time(), resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(count):
            await _one_run(manager, runs, worker, mode, ends)
        cpu, after = time.process_time() - started, resource.getrusage(resource.RUSAGE_SELF)
        counts.counting = False
        counts.by_kind["voluntary_context_switches"] = after.ru_nvcsw - before.ru_nvcsw
        counts.by_kind["involuntary_context_switches"] = after.ru_nivcsw - before.ru_nivcsw
        return cpu
    finally:
        await worker.stop()
        await manager.aclose()
        runs.close()


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=Count(1, 100_000), default=50)
    parser.add_argument("--mode", choices=("updates", "values"), default="updates")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    expect(args.runs > 0, "--runs must be positive")
    counts = Counts()
    pool = offload._store_pool()
    counts.wrap(pool, "run", "store_pool_trips")
    counts.wrap(OneTripSqliteSaver, "_on_thread", "checkpointer_thread_trips")
    counts.wrap(Pregel, "_prepare_state_snapshot", "snapshots_prepared")
    with tempfile.TemporaryDirectory() as directory:
        cpu = asyncio.run(_measure(Path(directory), args.runs, args.mode, counts))
    figures: dict[str, Any] = {kind: round(counts.by_kind[kind] / args.runs, 2) for kind in
                               ("store_pool_trips", "checkpointer_thread_trips", "snapshots_prepared",
                                "voluntary_context_switches", "involuntary_context_switches")}
    figures["cpu_ms_per_run"] = round(cpu / args.runs * 1000, 2)
    figures["runs"] = args.runs
    figures["mode"] = args.mode
    if args.json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            print(f"{name:28} {value}")
    return 0


if __name__ == "__main__":
    checked_main(main)
