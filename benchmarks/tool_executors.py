"""Per-call cost of ``read_file`` on a 4 KB file through the ``local`` and ``sandboxed`` executors.

The tool is grapharc-tools' own ``read_file``; what differs between the lines is the executor:
for the sandbox a fresh forked child per call with its audit hook, the JSON reply over a pipe
and the reaping.
The caller has LangGraph and the harness imported, as ``grapharc agent`` does, since the cost
of a fork grows with the parent's memory. Two floors follow: a bare fork whose child answers
one byte, reaped late like the sandbox's (the floor under any fork-per-call design), and the
same byte through a keeper (a fork that forks the child, waits for it to end and reports,
as ``grapharc.tools.reaper`` does so that nothing a call starts outlives it: the floor under
this sandbox's design). Calls alternate so drift (and other load on the machine) hits all
alike; p50 and p99 are over ``--calls`` calls each. Every call's answer must be the file's
content (the forks' byte), or the script exits 1 and prints no figure.

    .venv/bin/python benchmarks/tool_executors.py [--calls N] [--quick] [--json]
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _arguments import Count, benchmark_parser
from _checked import checked_main, expect_equal

from grapharc.harness import AgentNode, ToolRegistry  # noqa: F401  (the caller a real agent run is)
from grapharc.harness.executors import LocalExecutor
from grapharc.tools import SandboxedExecutor

FILE_BYTES = 4096


class ForkFloor:
    """A fork whose child answers one byte over a pipe: what the sandbox cannot go below.
    With ``keeper``, the fork forks the child, waits for it to end and reports that on a second
    pipe, which the caller waits for too, as the sandbox's keeper does."""

    def __init__(self, *, keeper: bool) -> None:
        self.keeper = keeper
        self.unreaped: list[int] = []

    def run(self, *_: Any, **__: Any) -> str:
        self.unreaped = [pid for pid in self.unreaped if os.waitpid(pid, os.WNOHANG)[0] == 0]
        read_fd, write_fd = os.pipe()
        status_fd, report_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            if self.keeper and (child := os.fork()) != 0:
                os.close(write_fd)
                os.waitpid(child, 0)
                os.write(report_fd, b"exited 0\n")
                os._exit(0)
            os.write(write_fd, b"x")
            os.close(write_fd)  # answered before teardown, as the sandbox's child does
            os._exit(0)
        os.close(write_fd)
        os.close(report_fd)
        while os.read(read_fd, 1):
            pass
        os.close(read_fd)
        report = os.read(status_fd, 64) if self.keeper else b"exited 0\n"
        os.close(status_fd)
        self.unreaped.append(pid)
        return "x" if report == b"exited 0\n" else f"a keeper that reported {report!r}"


def percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[98]


def measure(calls: int, workspace: Path) -> dict[str, list[float]]:
    read_file = ToolRegistry.from_plugins(["read_file"]).get("read_file")
    executors: dict[str, Any] = {"local": LocalExecutor(), "sandboxed": SandboxedExecutor(),
                                 "bare fork": ForkFloor(keeper=False), "keeper fork": ForkFloor(keeper=True)}
    expected = {"local": read_file.function(str(workspace), **read_file.arguments({"path": "small.txt"})),
                "bare fork": "x", "keeper fork": "x"}
    expected["sandboxed"] = expected["local"]
    samples: dict[str, list[float]] = {name: [] for name in executors}
    for _ in range(calls):
        for name, executor in executors.items():
            started = time.perf_counter()
            result = executor.run(read_file, {"path": "small.txt"}, workspace=workspace, timeout=30)
            samples[name].append(time.perf_counter() - started)
            expect_equal(result, expected[name], f"the {name} executor's answer to read_file")
    return samples


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--calls", type=Count(1, 1_000_000), default=500)
    parser.add_argument("--quick", action="store_true", help="20 calls each")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    if options.quick:
        options.calls = 20
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "small.txt").write_text("x" * (FILE_BYTES - 1) + "\n")
        samples = measure(options.calls, workspace)
    cuts = {name: percentiles(values) for name, values in samples.items()}
    ratio = cuts["sandboxed"][0] / cuts["local"][0]
    to_fork, to_keeper = (cuts["sandboxed"][0] / cuts[floor][0] for floor in ("bare fork", "keeper fork"))
    if options.json:
        print(json.dumps({"calls": options.calls, "p50_ratio": ratio, "p50_to_bare_fork": to_fork,
                          "p50_to_keeper_fork": to_keeper, **{
            f"{name.replace(' ', '_')}_{which}_ms": cut * 1e3
            for name, (p50, p99) in cuts.items() for which, cut in (("p50", p50), ("p99", p99))}}))
        return 0
    print(f"a 4 KB read, {options.calls} calls each (the forks: floors, no tool)")
    for name, (p50, p99) in cuts.items():
        print(f"  {name:11} p50 {p50 * 1e3:7.3f} ms   p99 {p99 * 1e3:7.3f} ms")
    print(f"  sandboxed / local at p50: {ratio:.0f}x")
    print(f"  sandboxed / bare fork at p50: {to_fork:.2f}x   / keeper fork: {to_keeper:.2f}x")
    return 0


if __name__ == "__main__":
    checked_main(main)
