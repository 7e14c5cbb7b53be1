"""benchmarks/agent_loop.py runs each loop ``--warm-up`` times, uncounted, before the runs its
figures come from, so first-use work is not in them."""

from __future__ import annotations

import json
import sys
from itertools import count

import pytest
from benchmark_runs import BENCHMARKS

WARM_UP_SECONDS, TIMED_SECONDS = 1.0, 2.0
"""What the stand-in measurement answers for warm-up runs, and for timed ones."""


def test_the_warm_up_runs_are_not_in_the_figures(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import agent_loop

    calls = count()

    def measured(make, steps):  # the first 2 runs of each loop (4 calls) are the warm-up's
        return (WARM_UP_SECONDS,) * 2 if next(calls) < 4 else (TIMED_SECONDS,) * 2

    monkeypatch.setattr(agent_loop, "per_step", measured)
    monkeypatch.setattr(sys, "argv", ["agent_loop.py", "--steps", "3", "--runs", "2", "--warm-up", "2",
                                      "--json"])

    assert agent_loop.main() == 0

    result = json.loads(capsys.readouterr().out)
    assert next(calls) == 8  # 2 warm-up and 2 timed runs of each loop
    assert result["warm_up"] == 2
    figures = (result["langgraph_prebuilt_us_per_step"], result["grapharc_agent_us_per_step"])
    assert figures == (TIMED_SECONDS * 1e6, TIMED_SECONDS * 1e6)
