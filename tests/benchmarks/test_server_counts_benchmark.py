"""server_counts.py's arithmetic and arguments, without valgrind: the idle rate over the runs' window
taken off the instructions per run, the counters of every process of a server summed, the ratio
ours / theirs of each figure under ``--vs langgraph-dev``, and ``--vs`` refused with strace."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from benchmark_runs import BENCHMARKS, run_benchmark

sys.path.insert(0, str(BENCHMARKS))
from _checked import WorkFailed


@pytest.fixture
def server_counts(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import server_counts

    return server_counts


def counted(server_counts: types.ModuleType, busy: tuple[int, float], idle: tuple[int, float],
            runs: int = 10) -> object:
    return server_counts.Counted(runs, server_counts.Window(*busy), server_counts.Window(*idle))


def test_the_idle_rate_over_the_runs_window_is_taken_off_each_run(server_counts: types.ModuleType) -> None:
    # 10 runs in 12 s ran 150 million instructions; idle, the server ran 20 million in 10 s (2 a second)
    figures = counted(server_counts, busy=(150_000_000, 12.0), idle=(20_000_000, 10.0)).figures()

    assert figures == {"instructions_per_run_millions": 15.0, "idle_instructions_per_s_millions": 2.0,
                       "instructions_per_run_less_idle_millions": 12.6,  # (150 - 2 x 12) / 10
                       "runs_window_s": 12.0, "idle_window_s": 10.0}


def test_the_comparison_gives_ours_over_theirs_of_each_instruction_figure(
        server_counts: types.ModuleType) -> None:
    ours = counted(server_counts, busy=(300_000_000, 10.0), idle=(10_000_000, 10.0))  # 30, 1, 29
    theirs = counted(server_counts, busy=(200_000_000, 10.0), idle=(40_000_000, 10.0))  # 20, 4, 16
    args = types.SimpleNamespace(runs=10, idle_seconds=10.0)

    report = server_counts.compared(ours, theirs, args)

    assert report["ratio_ours_to_theirs"] == {"instructions_per_run_millions": 1.5,
                                              "idle_instructions_per_s_millions": 0.25,
                                              "instructions_per_run_less_idle_millions": 1.81}
    table = server_counts.compared_text(report).splitlines()[1:-1]
    rows = {line.split()[0]: line.split()[1:] for line in table}
    assert rows["instructions_per_run_less_idle_millions"] == ["29.0", "16.0", "1.81"]
    assert rows["runs_window_s"] == ["10.0", "10.0"]  # no ratio for a window's length


def test_a_window_sums_the_dumps_of_every_process_of_the_server(server_counts: types.ModuleType,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    """Each process under callgrind dumps a file of its own (all its threads in it): the window's
    instructions are their sum, and a process that dumped nothing fails the count."""
    dumped = {101: 7_000, 102: 5_000}
    commands: list[list[str]] = []

    def control(command: list[str]) -> None:
        commands.append(command)
        pid = int(command[2])
        if command[1] == "-d" and pid in dumped:
            dump = tmp_path / f"callgrind.out.{pid}.{len(commands)}"
            dump.write_text(f"events: Ir\nsummary: {dumped[pid]}\n")

    monkeypatch.setattr(server_counts, "tool", lambda name: name)
    monkeypatch.setattr(server_counts, "run", control)
    monkeypatch.setattr(server_counts, "process_tree", lambda pid: [pid, pid + 1])
    (tmp_path / "callgrind.out.99").write_text("summary: 1000000\n")  # a child that exited before

    window = server_counts.window(101, tmp_path, lambda: None)

    assert window.instructions == 12_000 and window.seconds >= 0
    assert [command[1:] for command in commands] == [["-z", "101"], ["-z", "102"],
                                                     ["-d", "101"], ["-d", "102"]]
    del dumped[102]
    with pytest.raises(WorkFailed, match="2 processes under callgrind dumped 1 files"):
        server_counts.window(101, tmp_path, lambda: None)


def test_the_comparison_with_langgraph_dev_is_refused_with_strace() -> None:
    done = run_benchmark("server_counts.py", "--tool", "strace", "--vs", "langgraph-dev", "--json")

    assert done.returncode == 2 and done.stderr == "", done.stderr
    assert "argument --vs: counts with --tool callgrind only" in json.loads(done.stdout)["error"]
