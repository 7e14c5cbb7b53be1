"""What one streamed run costs the server process, counted: system calls by kind, or instructions.

One ``grapharc serve`` on 127.0.0.1 with server_load.py's three-node chain serves ``--warm-up`` runs
uncounted, then ``--runs`` runs one after another, each as ``server_load.py --vs langgraph-dev``
makes them (create a thread, stream a run of it in the ``updates`` mode to its end); what the
server did during those runs is divided by their number. Counts, not times, so a noisy machine
does not move them.

``--tool strace``: ``strace -c -f`` attached to the server after the warm-up, the calls per run of
each kind (send, recvfrom, epoll_wait...), most first. ``--tool callgrind``: the server launched
under ``valgrind --tool=callgrind --trace-children=yes`` (slow: a minute or more to start), its
counters zeroed after the warm-up and dumped after the runs, instructions per run summed over its
processes and threads (``PYTHONHASHSEED=0``, so the same code counts the same). A server also
works while no request comes (ours looks for work every 2 s, ``langgraph dev``'s queue polls every
0.5 s), and that work falls in the runs' window too; so the counters are zeroed again, left for
``--idle-seconds`` with no request, and dumped: printed are the instructions per run as measured,
the idle instructions per second, and the instructions per run less the idle rate over the runs'
window (the seconds from zeroing to dumping).

``--vs langgraph-dev`` (with ``--tool callgrind``): the same count, the same runs and the same idle
window on LangGraph's own server too, ``langgraph dev`` serving the chain's plain LangGraph twin (see
langgraph_dev.py; no reloader), and the ratio ours / theirs of each figure. Every run must succeed
on each server, or no figure is printed (exit 1).

    .venv/bin/python benchmarks/server_counts.py --tool strace|callgrind [--runs N] [--warm-up N]
        [--node-seconds S] [--idle-seconds S] [--vs langgraph-dev] [--json]
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _arguments import Count, Positive, benchmark_parser
from _callgrind import dump_total, tool
from _checked import checked_main, expect, run
from langgraph_dev import langgraph_dev, wait_healthy
from server_load import REGISTRY, Tally, announcement, launch_server, load, portable_run, process_tree

PACE_RUNS_PER_S = 1000.0
"""The schedule's rate: high enough that each run starts as soon as the one before ended."""


def runs(url: str, count: int, timeout: float) -> None:
    """``count`` portable runs against ``url``, one at a time; ``WorkFailed`` unless all succeeded."""
    tally: Tally
    tally, _ = asyncio.run(load(url, 1, PACE_RUNS_PER_S, count / PACE_RUNS_PER_S, timeout, portable_run))
    expect(tally.runs == count and not tally.failed,
           f"{tally.runs} of {count} runs ran, failed: {tally.failed[:1]}")


def syscalls_per_run(url: str, pid: int, args: argparse.Namespace, work: Path) -> dict[str, float]:
    """``strace -c -f`` over ``args.runs`` runs: the calls per run of each kind, most first."""
    table = work / "strace.txt"
    strace = subprocess.Popen([tool("strace"), "-c", "-f", "-o", str(table), "-p", str(pid)],
                              stderr=subprocess.PIPE, text=True)
    assert strace.stderr is not None
    expect("attached" in strace.stderr.readline(), "strace did not attach to the server")
    time.sleep(1.0)  # the attach message comes per thread; let them all be attached
    runs(url, args.runs, args.timeout)
    strace.send_signal(signal.SIGINT)
    strace.wait(timeout=args.timeout)
    counts: dict[str, float] = {}
    for line in table.read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            counts[fields[-1]] = round(int(fields[3]) / args.runs, 1)
    expect(counts, f"strace counted nothing: {table.read_text()[:300]}")
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


@dataclass(frozen=True)
class Window:
    """What a server's processes ran between their counters' zeroing and dumping."""

    instructions: int
    seconds: float


@dataclass(frozen=True)
class Counted:
    """A server's counts: ``runs`` runs in one window, and an idle window with no request."""

    runs: int
    busy: Window
    idle: Window

    def figures(self) -> dict[str, float]:
        """Instructions per run as measured, idle instructions per second, and per run less the idle
        rate over the runs' window (in millions), with both windows' lengths."""
        idle_rate = self.idle.instructions / self.idle.seconds
        less_idle = self.busy.instructions - idle_rate * self.busy.seconds
        return {"instructions_per_run_millions": round(self.busy.instructions / self.runs / 1e6, 2),
                "idle_instructions_per_s_millions": round(idle_rate / 1e6, 3),
                "instructions_per_run_less_idle_millions": round(less_idle / self.runs / 1e6, 2),
                "runs_window_s": round(self.busy.seconds, 1), "idle_window_s": round(self.idle.seconds, 1)}


RATIOS = ("instructions_per_run_millions", "idle_instructions_per_s_millions",
          "instructions_per_run_less_idle_millions")
"""The figures ``--vs`` prints as a ratio, ``grapharc serve``'s over ``langgraph dev``'s."""


def callgrind(work: Path) -> list[str]:
    """The command that runs a server under callgrind, its children too, each dumping into ``work``."""
    return [tool("valgrind"), "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={work}/callgrind.out.%p"]


def control(command: str, pids: list[int]) -> float:
    """``callgrind_control command`` to each of ``pids``; the moment (``time.monotonic()``) midway
    through, when the processes did it."""
    began = time.monotonic()
    for pid in pids:
        run([tool("callgrind_control"), command, str(pid)])
    return (began + time.monotonic()) / 2


def window(pid: int, work: Path, action: Callable[[], None]) -> Window:
    """The instructions process ``pid`` and its descendants ran while ``action`` ran: their counters
    zeroed before, dumped (into ``work``) after."""
    pids = process_tree(pid)
    zeroed = control("-z", pids)
    action()
    before = set(work.glob("callgrind.out.*"))
    dumped = control("-d", pids)
    dumps = set(work.glob("callgrind.out.*")) - before
    expect(len(dumps) == len(pids), f"{len(pids)} processes under callgrind dumped {len(dumps)} files")
    total = sum(map(dump_total, dumps))
    expect(total, "callgrind dumped no totals")
    return Window(total, dumped - zeroed)


def counted(url: str, pid: int, args: argparse.Namespace, work: Path) -> Counted:
    """The server at ``url`` (process ``pid``, under callgrind) counted over ``args.runs`` runs after
    ``args.warm_up``, then over ``args.idle_seconds`` with no request."""
    runs(url, args.warm_up, args.timeout)
    busy = window(pid, work, lambda: runs(url, args.runs, args.timeout))
    idle = window(pid, work, lambda: time.sleep(args.idle_seconds))
    return Counted(args.runs, busy, idle)


@contextmanager
def ours(work: Path, args: argparse.Namespace, wrapper: list[str]) -> Iterator[tuple[str, int]]:
    """``grapharc serve`` of the chain run by ``wrapper``, ready: its URL and process id."""
    server = launch_server(work, args.node_seconds, str(work / "sessions"), wrapper=wrapper)
    try:
        url = str(announcement(server)["url"])
        wait_healthy(f"{url}/readyz", server, time.monotonic(), args.timeout)
        yield url, server.pid
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=args.timeout)


@contextmanager
def theirs(work: Path, args: argparse.Namespace, wrapper: list[str]) -> Iterator[tuple[str, int]]:
    """``langgraph dev`` serving the chain's plain twin, run by ``wrapper``, healthy: its URL and
    process id."""
    (work / "bench_graphs.py").write_text(REGISTRY)
    env = {"BENCH_NODE_SECONDS": str(args.node_seconds)}
    with langgraph_dev(work, "bench_graphs:register", [work], env, wrapper, args.timeout) as dev:
        yield dev.url, dev.pid


def compared(ours_counted: Counted, theirs_counted: Counted, args: argparse.Namespace) -> dict[str, Any]:
    """The ``--vs`` report: both servers' figures and the ratio ours / theirs of each."""
    mine, other = ours_counted.figures(), theirs_counted.figures()
    ratios = {name: round(mine[name] / other[name], 2) if other[name] else None for name in RATIOS}
    return {"runs": args.runs, "idle_seconds": args.idle_seconds, "grapharc serve": mine,
            "langgraph dev": other, "ratio_ours_to_theirs": ratios}


def compared_text(report: dict[str, Any]) -> str:
    """The ``--vs`` report as a table: a figure a line, ours, theirs and the ratio."""
    mine, other, ratios = report["grapharc serve"], report["langgraph dev"], report["ratio_ours_to_theirs"]
    width = max(map(len, mine))
    lines = [f"{'':<{width}}  {'grapharc serve':>14}  {'langgraph dev':>14}  {'ours/theirs':>11}"]
    lines += [f"{name:<{width}}  {mine[name]:>14}  {other[name]:>14}  {ratios.get(name, ''):>11}"
              for name in mine]
    lines.append(f"runs={report['runs']}  idle_seconds={report['idle_seconds']:g}")
    return "\n".join(lines)


def versus_langgraph_dev(args: argparse.Namespace, work: Path) -> str:
    """Both servers counted under callgrind, one after the other; the report, as text or JSON."""
    (work / "ours").mkdir()
    (work / "theirs").mkdir()
    with ours(work / "ours", args, callgrind(work / "ours")) as (url, pid):
        mine = counted(url, pid, args, work / "ours")
    with theirs(work / "theirs", args, callgrind(work / "theirs")) as (url, pid):
        other = counted(url, pid, args, work / "theirs")
    report = compared(mine, other, args)
    return json.dumps(report) if args.json else compared_text(report)


def ours_alone(args: argparse.Namespace, work: Path) -> str:
    """Our server counted by ``args.tool``; the figures, as text or JSON."""
    wrapper = callgrind(work) if args.tool == "callgrind" else []
    with ours(work, args, wrapper) as (url, pid):
        if args.tool == "strace":
            runs(url, args.warm_up, args.timeout)
            figures: dict[str, float] = syscalls_per_run(url, pid, args, work)
        else:
            figures = counted(url, pid, args, work).figures()
    figures = {"runs": args.runs, **figures}
    return json.dumps(figures) if args.json else "\n".join(f"{name:>40}  {value:g}"
                                                            for name, value in figures.items())


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--tool", choices=("strace", "callgrind"), required=True)
    parser.add_argument("--runs", type=Count(1, 10_000), default=20, help="runs counted")
    parser.add_argument("--warm-up", type=Count(0, 10_000), default=5, help="runs served before counting")
    parser.add_argument("--node-seconds", type=Positive(3_600), default=0.3,
                        help="each node's work (a sleep)")
    parser.add_argument("--idle-seconds", type=Positive(3_600), default=10.0,
                        help="the idle window's length (--tool callgrind)")
    parser.add_argument("--timeout", type=Positive(), default=600.0,
                        help="seconds a request, or a server's start, may take")
    parser.add_argument("--vs", choices=["langgraph-dev"],
                        help="count langgraph dev the same way too (--tool callgrind)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.vs and args.tool != "callgrind":
        parser.error("argument --vs: counts with --tool callgrind only")
    os.environ["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory(prefix="grapharc-counts-") as tmp:
        report = versus_langgraph_dev(args, Path(tmp)) if args.vs else ours_alone(args, Path(tmp))
    print(report)
    return 0


if __name__ == "__main__":
    checked_main(main)
