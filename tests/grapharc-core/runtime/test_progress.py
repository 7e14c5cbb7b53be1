"""ProgressGuard: which stop reason wins, and what counts as progress."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from grapharc.runtime.progress import InvalidProgressGuardError, ProgressGuard, StopReason


def rounds_until_stop(guard: ProgressGuard, states: Sequence[Any]) -> tuple[int, StopReason]:
    """Feed one state per round; return the round and reason the guard stopped at."""
    for state in states:
        reason = guard.check(state)
        if reason is not None:
            return guard.rounds, reason
    raise AssertionError(f"the guard never stopped over {len(states)} rounds")


def test_stop_reasons_are_the_strings_traces_record() -> None:
    assert [reason.value for reason in StopReason] == ["target_met", "no_progress", "round_cap"]
    assert StopReason.NO_PROGRESS == "no_progress"


def test_a_met_target_wins_over_no_progress_and_the_round_cap_on_the_same_round() -> None:
    guard = ProgressGuard(max_rounds=1, target=lambda s: s == "done", measure=lambda s: 0, window=1)
    assert guard.check("done") is StopReason.TARGET_MET


def test_no_progress_wins_over_the_round_cap_on_the_same_round() -> None:
    guard = ProgressGuard(max_rounds=2, measure=lambda s: s, window=1)
    assert guard.check(5) is None
    assert guard.check(5) is StopReason.NO_PROGRESS


def test_an_impossible_task_halts_on_the_no_progress_window_far_under_the_ceiling() -> None:
    guard = ProgressGuard(max_rounds=100, target=lambda s: s >= 10, measure=lambda s: s)
    assert rounds_until_stop(guard, [0] * 100) == (4, StopReason.NO_PROGRESS)


def test_a_numeric_measure_must_strictly_beat_its_best_to_count_as_progress() -> None:
    guard = ProgressGuard(max_rounds=100, measure=lambda s: s, window=3)
    # 5 is the best; 3, 4 and a return to 5 are not progress even though they change.
    assert rounds_until_stop(guard, [5, 3, 4, 5, 9]) == (4, StopReason.NO_PROGRESS)


def test_steady_numeric_improvement_never_stops_on_no_progress() -> None:
    guard = ProgressGuard(max_rounds=50, measure=lambda s: s, window=1)
    assert rounds_until_stop(guard, range(100)) == (50, StopReason.ROUND_CAP)


def test_a_non_numeric_measure_progresses_only_on_a_value_never_seen_before() -> None:
    guard = ProgressGuard(max_rounds=100, measure=lambda s: s, window=3)
    # "a" and "b" are new; alternating between them afterwards is going in circles.
    assert rounds_until_stop(guard, ["a", "b", "a", "b", "a", "c"]) == (5, StopReason.NO_PROGRESS)


def test_a_new_value_resets_the_no_progress_window() -> None:
    guard = ProgressGuard(max_rounds=100, measure=lambda s: frozenset(s), window=2)
    states = [{"x"}, {"x"}, {"x", "y"}, {"x", "y"}, {"x", "y"}]
    assert rounds_until_stop(guard, states) == (5, StopReason.NO_PROGRESS)


def test_nan_never_counts_as_progress() -> None:
    guard = ProgressGuard(max_rounds=100, measure=lambda s: s, window=2)
    assert rounds_until_stop(guard, [1.0, math.nan, math.nan]) == (3, StopReason.NO_PROGRESS)


def test_without_target_or_measure_only_the_round_cap_stops() -> None:
    guard = ProgressGuard(max_rounds=3)
    assert [guard.check(None) for _ in range(3)] == [None, None, StopReason.ROUND_CAP]


def test_reset_forgets_rounds_best_and_seen_values() -> None:
    guard = ProgressGuard(max_rounds=3, measure=lambda s: s, window=2)
    guard.check(7)
    guard.check(7)
    guard.reset()
    assert guard.rounds == 0
    assert guard.check(7) is None  # seen before the reset, new after it
    assert guard.check(8) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_rounds": 0},
        {"max_rounds": True},
        {"max_rounds": 2.5},
        {"max_rounds": 3, "window": 0},
        {"max_rounds": 3, "window": -1},
        {"max_rounds": 3, "target": "done"},
        {"max_rounds": 3, "measure": 5},
    ],
)
def test_arguments_it_cannot_work_with_are_refused_naming_the_argument(
    kwargs: dict[str, Any],
) -> None:
    bad = next(name for name in ("target", "measure", "window", "max_rounds") if name in kwargs)
    with pytest.raises(InvalidProgressGuardError, match=bad):
        ProgressGuard(**kwargs)


def test_an_unhashable_measure_is_refused_with_a_clear_error() -> None:
    guard = ProgressGuard(max_rounds=3, measure=lambda s: [s])
    with pytest.raises(InvalidProgressGuardError, match="unhashable list"):
        guard.check(1)
