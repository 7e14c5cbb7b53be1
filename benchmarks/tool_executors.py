"""Per-call cost of reading a 4 KB file through the ``local`` and ``sandboxed`` executors.

The tool is a plain module-level read of one workspace file (``read_file`` itself lives on the
``tools`` branch); what is measured is the executor: argument validation, and for the sandbox a
fresh forked child per call with its audit hook, the JSON reply over a pipe and the reaping.
The caller has LangGraph and the harness imported, as ``grapharc agent`` does, since the cost
of a fork grows with the parent's memory. Calls alternate between the executors so drift hits
both alike; p50 and p99 are over ``--calls`` calls each.

    .venv/bin/python benchmarks/tool_executors.py [--calls N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from grapharc.executors import LocalExecutor
from grapharc.harness import AgentNode, Tool  # noqa: F401  (the caller a real agent run is)
from grapharc.tools import SandboxedExecutor

FILE_BYTES = 4096


class ReadArgs(BaseModel):
    path: str


def read_small(workspace: str, path: str) -> str:
    """The tool both executors run: a text file inside the workspace."""
    return Path(workspace, path).read_text()


READ = Tool("read_small", "read a file in the workspace", ReadArgs, read_small)


def percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[98]


def measure(calls: int, workspace: Path) -> dict[str, list[float]]:
    executors: dict[str, Any] = {"local": LocalExecutor(), "sandboxed": SandboxedExecutor()}
    expected = (workspace / "small.txt").read_text()
    samples: dict[str, list[float]] = {name: [] for name in executors}
    for _ in range(calls):
        for name, executor in executors.items():
            started = time.perf_counter()
            result = executor.run(READ, {"path": "small.txt"}, workspace=workspace, timeout=30)
            samples[name].append(time.perf_counter() - started)
            assert result == expected
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "small.txt").write_text("x" * (FILE_BYTES - 1) + "\n")
        samples = measure(options.calls, workspace)
    (local_p50, local_p99), (sandbox_p50, sandbox_p99) = (percentiles(samples[name])
                                                          for name in ("local", "sandboxed"))
    result = {"calls": options.calls, "local_p50_ms": local_p50 * 1e3, "local_p99_ms": local_p99 * 1e3,
              "sandboxed_p50_ms": sandbox_p50 * 1e3, "sandboxed_p99_ms": sandbox_p99 * 1e3,
              "p50_ratio": sandbox_p50 / local_p50}
    if options.json:
        print(json.dumps(result))
        return
    print(f"read 4 KB, {options.calls} calls   local      p50 {local_p50 * 1e3:7.3f} ms   "
          f"p99 {local_p99 * 1e3:7.3f} ms")
    print(f"read 4 KB, {options.calls} calls   sandboxed  p50 {sandbox_p50 * 1e3:7.3f} ms   "
          f"p99 {sandbox_p99 * 1e3:7.3f} ms   {sandbox_p50 / local_p50:.0f}x local at p50")


if __name__ == "__main__":
    main()
