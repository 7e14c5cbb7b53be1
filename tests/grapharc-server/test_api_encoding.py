"""State values as JSON on every view: plain values written as they are, odd ones converted, no key
dropped."""

from __future__ import annotations

import datetime
import enum
import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from grapharc.server.api.encoding import json_text, json_value


class Colour(enum.Enum):
    RED = "red"


def plain_json() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
                       st.floats(allow_nan=False, allow_infinity=False))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=6), inner, max_size=4)), max_leaves=15)


@given(plain_json())
def test_plain_json_is_written_as_the_general_conversion_writes_it(value: Any) -> None:
    assert json_text(value) == json.dumps(json_value(value), allow_nan=False)


def test_no_key_is_dropped_on_any_view() -> None:
    """FastAPI's encoder drops keys starting ``_sa`` by default: a state field so named vanished."""
    state = {"_sample": 1, "nested": {"_saved": [1, 2]}, "odd": {"_sa": b"\x00", "at": math.nan}}
    assert json_value(state) == {"_sample": 1, "nested": {"_saved": [1, 2]},
                                 "odd": {"_sa": "AA==", "at": None}}
    assert json.loads(json_text(state)) == json_value(state)


def test_values_json_has_no_word_for_are_converted_the_same_on_both_paths() -> None:
    odd = {"reading": math.inf, "tags": {"b", "a"}, "raw": b"\x00\xffok", "colour": Colour.RED,
           "seen_at": datetime.datetime(2026, 12, 1, 15, 0, tzinfo=datetime.UTC)}
    assert json.loads(json_text(odd)) == json_value(odd) == {
        "reading": None, "tags": ["a", "b"], "raw": "AP9vaw==", "colour": "red",
        "seen_at": "2026-12-01T15:00:00+00:00"}
