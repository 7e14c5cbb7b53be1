"""call_timeout: the seconds an out-of-process executor waits, checked before anything starts."""

from __future__ import annotations

from typing import Any

import pytest

from grapharc.harness.executors import ToolTimeoutError, call_timeout
from grapharc.runtime.deadline import InvalidDeadlineError
from grapharc.testing.executor_kit import ADD


@pytest.mark.parametrize(("timeout", "seconds"), [(None, None), (2, 2.0), (0.25, 0.25), (float("inf"), None)])
def test_a_usable_timeout_is_seconds_or_no_limit(timeout: Any, seconds: float | None) -> None:
    assert call_timeout(ADD, timeout) == seconds


@pytest.mark.parametrize("timeout", [float("nan"), "5", True, [1]])
def test_a_timeout_that_is_not_a_number_names_the_tool(timeout: Any) -> None:
    with pytest.raises(InvalidDeadlineError, match="'add'"):
        call_timeout(ADD, timeout)


@pytest.mark.parametrize("timeout", [0, -1, -0.5, float("-inf")])
def test_a_timeout_with_no_time_left_has_already_expired(timeout: float) -> None:
    with pytest.raises(ToolTimeoutError, match="'add'"):
        call_timeout(ADD, timeout)
