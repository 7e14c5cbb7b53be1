"""Running a script of benchmarks/ as a user does, optionally with one module of its work broken.

The breaking is ``sabotage/sitecustomize.py``: its folder goes first on PYTHONPATH, so the
benchmark's own process and every Python child it starts load the named module with the given
code run in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SABOTAGE = Path(__file__).resolve().parent / "sabotage"
REFUSAL = "no figures: a timed run did not do its work"
"""What benchmarks/_checked.py says on stderr when it refuses to print figures."""


@dataclass(frozen=True)
class Sabotage:
    """Code run in ``module`` right after it is loaded, in every process of a benchmark."""

    module: str
    code: str


def run_benchmark(script: str, *args: str, sabotage: Sabotage | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/SCRIPT ARGS`` to its end, its output captured."""
    env = dict(os.environ)
    if sabotage is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SABOTAGE), env.get("PYTHONPATH")]))
        env["GRAPHARC_SABOTAGE_MODULE"] = sabotage.module
        env["GRAPHARC_SABOTAGE_CODE"] = sabotage.code
    return subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


def assert_refused(done: subprocess.CompletedProcess[str], naming: str) -> None:
    """The benchmark exited 1, printed no figure and no verdict, and said what failed."""
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout == "", done.stdout
    assert REFUSAL in done.stderr and naming in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
