"""What may cross the container boundary, and how an answer is found in a container's stdout."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from grapharc.tools.container.protocol import answer_line, find_answer, json_problem


@pytest.mark.parametrize("value", [None, True, 0, 2**70, -1.5, "naïve \u0000", [], {},
                                   {"a": [1, {"b": None}]}])
def test_plain_json_data_has_no_problem(value: Any) -> None:
    assert json_problem(value, "result") is None


@pytest.mark.parametrize(("value", "problem"), [
    ((1, 2), "result: tuple"),
    ({"a": {1, 2}}, "result.a: set"),
    ({"when": [datetime.date(2026, 1, 1)]}, "result.when[0]: date"),
    ({1: "x"}, "result: key 1 (int, not str)"),
    ({"ok": {0: "x"}}, "result.ok: key 0 (int, not str)"),
    ({None: 1}, "result: key None (NoneType, not str)"),
    ([float("nan")], "result[0]: nan (not a finite number)"),
    ({"x": float("inf")}, "result.x: inf (not a finite number)"),
    (b"bytes", "result: bytes"),
])
def test_data_json_would_change_or_reject_is_named_where_it_is(value: Any, problem: str) -> None:
    assert json_problem(value, "result") == problem


def test_the_answer_is_the_markers_line_and_nothing_else_counts() -> None:
    marker = "grapharc-answer-1234"
    stdout = "noise\n" + answer_line(marker, {"result": [1, 2]}) + "grapharc-answer-9999 {}\n"
    assert find_answer(stdout, marker) == {"result": [1, 2]}
    assert find_answer("grapharc-answer-9999 {\"result\": 1}\n", marker) is None


@pytest.mark.parametrize("line", ['{"result": [1, 2', "[1]", "not json"])
def test_a_cut_or_foreign_answer_line_is_no_answer(line: str) -> None:
    assert find_answer(f"grapharc-answer-1 {line}\n", "grapharc-answer-1") is None


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_nesting_is_walked_without_recursion_and_refused_past_its_limit() -> None:
    assert json_problem(nested(200), "arguments") is None
    problem = json_problem({"value": nested(50_000)}, "arguments")
    assert problem is not None and problem.endswith(": nested deeper than 200")
    assert problem.startswith("arguments.value[0][0]")
