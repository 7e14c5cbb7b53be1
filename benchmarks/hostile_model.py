"""Hostile model: every escape a scripted tool-calling model can try, and how many got through.

Runs ``grapharc.testing.hostile_kit`` on each executor (``local`` and, where installed,
``sandboxed``) in a temporary arena: traversal, absolute paths, symlinks, sibling prefixes, NUL
bytes, a .pth plant, a socket without needs_network, a subprocess from a sandboxed tool,
run_command with a shell string, denied and unregistered tools by name, wrong-typed and huge
arguments, planted instructions obeyed. Prints, per executor, the attempts, how many were
refused, and the governance violation count (0 when governance holds), plus the wall time.

    .venv/bin/python benchmarks/hostile_model.py [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from grapharc.plugins import registry
from grapharc.testing.hostile_kit import hostile_run


def measure(executor: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="grapharc-hostile-") as root:
        started = time.perf_counter()
        report = hostile_run(Path(root), executor)
        seconds = time.perf_counter() - started
    refused = sum(result.told.startswith("error:") for result in report.results)
    return {"executor": executor, "attempts": len(report.results), "refused": refused,
            "violations": len(report.violations), "details": list(report.violations),
            "seconds": round(seconds, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON document")
    args = parser.parse_args()
    executors = [name for name in ("local", "sandboxed") if name in registry("executors")]
    rows = [measure(executor) for executor in executors]
    total = sum(row["violations"] for row in rows)
    if args.json:
        print(json.dumps({"violations": total, "executors": rows}, indent=2))
        return
    for row in rows:
        print(f"{row['executor']:<10} attempts {row['attempts']:>3}  refused {row['refused']:>3}  "
              f"violations {row['violations']}  ({row['seconds']:.2f} s)")
        for detail in row["details"]:
            print(f"           {detail}")
    print(f"governance violations: {total}")


if __name__ == "__main__":
    main()
