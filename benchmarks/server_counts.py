"""What one streamed run costs the server process, counted: system calls by kind, or instructions.

One ``grapharc serve`` on 127.0.0.1 with server_load.py's three-node chain serves ``--warm-up`` runs
uncounted, then ``--runs`` runs one after another, each as ``server_load.py --vs langgraph-dev``
makes them (create a thread, stream a run of it in the ``updates`` mode to its end); what the
server did during those runs is divided by their number. Counts, not times, so a noisy machine
does not move them (a little idle work, the run worker's look for work every 2 s, falls in the
window too, the same on both sides of a change).

``--tool strace``: ``strace -c -f`` attached to the server after the warm-up, the calls per run of
each kind (send, recvfrom, epoll_wait...), most first. ``--tool callgrind``: the server launched
under ``valgrind --tool=callgrind`` (slow: a minute or two to start), its counters zeroed after the
warm-up and dumped after the runs, instructions per run (``PYTHONHASHSEED=0``, so the same code
counts the same).

    .venv/bin/python benchmarks/server_counts.py --tool strace|callgrind [--runs N] [--warm-up N]
        [--node-seconds S] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _arguments import Count, Positive, benchmark_parser
from _checked import checked_main, expect, run
from langgraph_dev import wait_healthy
from server_load import Tally, announcement, launch_server, load, portable_run

PACE_RUNS_PER_S = 1000.0
"""The schedule's rate: high enough that each run starts as soon as the one before ended."""


def tool(name: str) -> str:
    """The path of the program ``name``; ``WorkFailed`` when it is not installed."""
    path = shutil.which(name)
    expect(path, f"{name} is not installed: this count needs it")
    return str(path)


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


def instructions_per_run(url: str, pid: int, args: argparse.Namespace, work: Path) -> dict[str, float]:
    """The server's instructions per run under callgrind, between zeroing and dumping its counters."""
    run([tool("callgrind_control"), "-z", str(pid)])
    runs(url, args.runs, args.timeout)
    run([tool("callgrind_control"), "-d", str(pid)])
    totals = 0
    for dump in work.glob("callgrind.out.*"):
        for line in dump.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                totals = max(totals, int(line.split()[1]))
    expect(totals, "callgrind dumped no totals")
    return {"instructions_per_run_millions": round(totals / args.runs / 1e6, 2)}


def main() -> int:
    parser = benchmark_parser(__doc__.split("\n")[0])
    parser.add_argument("--tool", choices=("strace", "callgrind"), required=True)
    parser.add_argument("--runs", type=Count(1, 10_000), default=20, help="runs counted")
    parser.add_argument("--warm-up", type=Count(0, 10_000), default=5, help="runs served before counting")
    parser.add_argument("--node-seconds", type=Positive(3_600), default=0.3,
                        help="each node's work (a sleep)")
    parser.add_argument("--timeout", type=Positive(), default=600.0, help="seconds a request may take")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grapharc-counts-") as tmp:
        work = Path(tmp)
        os.environ["PYTHONHASHSEED"] = "0"
        wrapper = [tool("valgrind"), "--tool=callgrind", f"--callgrind-out-file={work}/callgrind.out.%p"] \
            if args.tool == "callgrind" else []
        server = launch_server(work, args.node_seconds, str(work / "sessions"), wrapper=wrapper)
        try:
            url = str(announcement(server)["url"])
            wait_healthy(f"{url}/readyz", server, time.monotonic())
            runs(url, args.warm_up, args.timeout)
            count = syscalls_per_run if args.tool == "strace" else instructions_per_run
            figures = count(url, server.pid, args, work)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=args.timeout)
    figures = {"runs": args.runs, **figures}
    print(json.dumps(figures) if args.json else "\n".join(f"{name:>32}  {value:g}"
                                                          for name, value in figures.items()))
    return 0


if __name__ == "__main__":
    checked_main(main)
