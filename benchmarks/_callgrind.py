"""Counting with valgrind's callgrind, for the benchmarks that count instructions rather than time
them (a noisy machine moves times, not counts): the programs it needs, and a dump's total."""

from __future__ import annotations

import shutil
from pathlib import Path

from _checked import expect


def tool(name: str) -> str:
    """The path of the program ``name``; ``WorkFailed`` when it is not installed."""
    path = shutil.which(name)
    expect(path, f"{name} is not installed: this count needs it")
    return str(path)


def dump_total(dump: Path) -> int:
    """The instructions a callgrind dump counted."""
    lines = dump.read_text(errors="replace").splitlines()
    counted = [int(line.split()[1]) for line in lines if line.startswith(("summary:", "totals:"))]
    return max(counted, default=0)
