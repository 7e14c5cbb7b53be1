"""Hostile model: every escape a scripted tool-calling model can try, and how many got through.

Runs ``grapharc.testing.hostile_kit`` on each executor (``local`` and, where installed,
``sandboxed``) in a temporary arena: traversal, absolute paths, symlinks, sibling prefixes, NUL
bytes, a .pth plant, a socket without needs_network, a subprocess from a sandboxed tool,
run_command with a shell string, denied and unregistered tools by name, wrong-typed and huge
arguments, planted instructions obeyed. Prints, per executor, the attempts, how many were
refused, and the governance violation count (0 when governance holds), plus the wall time.
A count of 0 means something only if the attempts were made: an executor whose run made no
attempt, or left one unanswered, ends the script with exit status 1 and no figure. Exit status
1 too when a violation got through (they are printed).

    .venv/bin/python benchmarks/hostile_model.py [--quick] [--json]     (--quick: the local executor only)
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from _arguments import benchmark_parser
from _checked import checked_main, expect

from grapharc.plugins import registry
from grapharc.testing.hostile_kit import hostile_run


def measure(executor: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="grapharc-hostile-") as root:
        started = time.perf_counter()
        report = hostile_run(Path(root), executor)
        seconds = time.perf_counter() - started
    expect(report.results, f"the {executor} executor's hostile run made no attempt")
    unanswered = [result.attempt for result in report.results if not result.told]
    expect(not unanswered, f"the {executor} executor's hostile run left attempts unanswered: {unanswered}")
    refused = sum(result.told.startswith("error:") for result in report.results)
    return {"executor": executor, "attempts": len(report.results), "refused": refused,
            "violations": len(report.violations), "details": list(report.violations),
            "seconds": round(seconds, 3)}


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument("--quick", action="store_true", help="the local executor only")
    args = parser.parse_args()
    wanted = ("local",) if args.quick else ("local", "sandboxed")
    executors = [name for name in wanted if name in registry("executors")]
    rows = [measure(executor) for executor in executors]
    total = sum(row["violations"] for row in rows)
    if args.json:
        print(json.dumps({"violations": total, "executors": rows}, indent=2))
        return 1 if total else 0
    for row in rows:
        print(f"{row['executor']:<10} attempts {row['attempts']:>3}  refused {row['refused']:>3}  "
              f"violations {row['violations']}  ({row['seconds']:.2f} s)")
        for detail in row["details"]:
            print(f"           {detail}")
    print(f"governance violations: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    checked_main(main)
