"""The async SQLite checkpointer an async turn (and the server) uses, against LangGraph's own.

Per superstep an async run writes a checkpoint and its task's writes, and GraphARC's audit
scan reads the latest checkpoint and a page of history. Measured in the same run, on a
fresh file each: CPU time per such cycle (``aput`` + ``aput_writes`` + ``aget_tuple`` +
``alist(limit=4)``, five steps on each of ``--threads`` threads) through
``SqliteCheckpoints.async_saver()`` (a ``SqliteSaver`` behind ``ThreadedSaver``: one trip to
its thread per call) and through LangGraph's ``AsyncSqliteSaver`` over aiosqlite (one trip per
statement, fetch and cursor close). CPU time counts every thread of the process, so the work
moved off the event loop is still counted. Each figure is the best of ``--runs``.

    .venv/bin/python benchmarks/async_checkpoints.py [--threads N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
from langgraph.checkpoint.base import BaseCheckpointSaver, create_checkpoint, empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from grapharc.checkpoints import SqliteCheckpoints

STEPS = 5

Opener = Callable[[Path], AbstractAsyncContextManager[BaseCheckpointSaver[Any]]]


@asynccontextmanager
async def langgraph_saver(path: Path) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """LangGraph's ``AsyncSqliteSaver`` over an aiosqlite connection to ``path``."""
    async with aiosqlite.connect(path) as connection:
        saver = AsyncSqliteSaver(connection)
        await saver.setup()
        yield saver


def grapharc_saver(path: Path) -> AbstractAsyncContextManager[BaseCheckpointSaver[Any]]:
    """The async saver GraphARC's ``sqlite:`` checkpoint store gives a loop."""
    return SqliteCheckpoints(path).async_saver()


async def cycles(saver: BaseCheckpointSaver[Any], threads: int) -> None:
    """``STEPS`` checkpoint cycles on each of ``threads`` threads, one after another."""
    for number in range(threads):
        thread = {"configurable": {"thread_id": f"t{number}", "checkpoint_ns": ""}}
        config: Any = thread
        checkpoint = empty_checkpoint()
        for step in range(STEPS):
            checkpoint = create_checkpoint(checkpoint, None, step)
            config = await saver.aput(config, checkpoint, {"step": step}, {})
            await saver.aput_writes(config, [("count", step)], f"task-{step}")
            await saver.aget_tuple(thread)
            _ = [item async for item in saver.alist(thread, limit=4)]


async def cpu_ms_per_cycle(opener: Opener, threads: int) -> float:
    """CPU milliseconds per cycle through a saver ``opener`` gives on a fresh file."""
    with tempfile.TemporaryDirectory() as directory:
        async with opener(Path(directory) / "checkpoints.db") as saver:
            started = time.process_time()
            await cycles(saver, threads)
            return (time.process_time() - started) * 1000 / (threads * STEPS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=300, help="threads written per measurement")
    parser.add_argument("--runs", type=int, default=3, help="measurements per saver; the best is kept")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    best: dict[str, float] = {}
    for _ in range(args.runs):  # alternated, so both see the machine in the same state
        for name, opener in (("langgraph", langgraph_saver), ("grapharc", grapharc_saver)):
            figure = asyncio.run(cpu_ms_per_cycle(opener, args.threads))
            best[name] = min(best.get(name, figure), figure)
    figures = {"cycles_per_measurement": args.threads * STEPS,
               **{f"{name}_cpu_ms_per_cycle": round(value, 3) for name, value in best.items()},
               "ratio_grapharc_to_langgraph": round(best["grapharc"] / best["langgraph"], 2)}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    width = max(map(len, figures))
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
