"""mcp_call.py's ``--count`` without valgrind: each side's instructions per call are the difference
between a process making the calls and one making a quarter of them, over the extra calls; each
process runs under callgrind with a fixed hash seed, a counted harness run's trace is checked, and
a machine without valgrind gets a refusal naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from benchmark_runs import BENCHMARKS, assert_refused

sys.path.insert(0, str(BENCHMARKS))
from _checked import WorkFailed


@pytest.fixture
def mcp_call(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import mcp_call

    return mcp_call


def test_each_side_counts_the_difference_over_the_extra_calls(mcp_call: types.ModuleType,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # start-up and warm-up cost 50 (direct) and 80 (harness) million; a call 1.0 and 1.05 million
    fixed = {"direct": 50_000_000, "harness": 80_000_000}
    per_call = {"direct": 1_000_000, "harness": 1_050_000}
    asked: list[tuple[str, int]] = []

    def count_side(side: str, calls: int, folder: Path) -> int:
        asked.append((side, calls))
        return fixed[side] + calls * per_call[side]

    monkeypatch.setattr(mcp_call, "count_side", count_side)

    result = mcp_call.counts(40)

    assert sorted(asked) == [("direct", 10), ("direct", 40), ("harness", 10), ("harness", 40)]
    assert result == {"calls": 40, "fewer_calls": 10, "direct_instructions_per_call": 1_000_000,
                      "harness_instructions_per_call": 1_050_000, "instruction_ratio": 1.05, "aim": 1.1}


def fake_callgrind(summary: int, trace_outcomes: list[str] | None, seen: list[dict[str, str]]):
    """A stand-in for running the counted process under callgrind: it writes the dump (and the
    harness's second run's trace) where the real one would."""

    def run(command: list[str], env: dict[str, str]) -> None:
        seen.append(env)
        option = next(part for part in command if part.startswith("--callgrind-out-file="))
        dump = Path(option.split("=", 1)[1])
        dump.write_text(f"events: Ir\nsummary: {summary}\n")
        if trace_outcomes is not None:
            folder = Path(command[-1])
            lines = [json.dumps({"phase": "tool", "tool": "notes.echo", "server": "notes", "executor": "mcp",
                                 "outcome": outcome, "run_id": "r", "ts": 1.0}) for outcome in trace_outcomes]
            (folder / "trace-2.jsonl").write_text("".join(line + "\n" for line in lines))

    return run


def test_a_counted_process_runs_under_callgrind_with_a_fixed_hash_seed(mcp_call: types.ModuleType,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []
    monkeypatch.setattr(mcp_call, "tool", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(mcp_call, "run", fake_callgrind(7_000_000, ["ok"] * 3, seen))

    assert mcp_call.count_side("harness", 3, tmp_path) == 7_000_000
    assert seen[0]["PYTHONHASHSEED"] == "0"


def test_a_counted_harness_run_whose_trace_shows_a_failed_call_is_refused(mcp_call: types.ModuleType,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    monkeypatch.setattr(mcp_call, "tool", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(mcp_call, "run", fake_callgrind(7_000_000, ["ok", "error", "ok"], []))

    with pytest.raises(WorkFailed, match="traced tool outcomes"):
        mcp_call.count_side("harness", 3, tmp_path)


def test_a_count_that_callgrind_did_not_dump_is_refused(mcp_call: types.ModuleType,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setattr(mcp_call, "tool", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(mcp_call, "run", fake_callgrind(0, None, []))

    with pytest.raises(WorkFailed, match="callgrind counted nothing for direct with 5 calls"):
        mcp_call.count_side("direct", 5, tmp_path)


def test_counting_without_valgrind_is_refused_naming_it(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no valgrind on it

    done = subprocess.run([sys.executable, str(BENCHMARKS / "mcp_call.py"), "--count", "--quick"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)

    assert_refused(done, "valgrind is not installed")
