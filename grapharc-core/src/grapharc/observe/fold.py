"""Folding state deltas back into state, with reducers for fields LangGraph appended to.

The trace records what each node wrote (its delta), not which state fields have reducers,
so a field is folded last-write-wins unless a reducer is named for it: ``append`` (a list
the node's items are added to), ``add`` (``+``: numbers summed, lists or strings joined),
``merge`` (a dict updated key by key) or ``replace`` (the default). A callable
``(current, update) -> new`` may be passed from Python instead of a name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from grapharc.observe.errors import ReducerError
from grapharc.trace.schema import REPR_KEY, TRUNCATION_MARKER

Reducer = Callable[[Any, Any], Any]


def replace(current: Any, update: Any) -> Any:
    """Last write wins."""
    return update


def append(current: Any, update: Any) -> Any:
    """Add the update's items (or the update itself, if not a list) to the current list."""
    items = current if isinstance(current, list) else ([] if current is None else [current])
    if isinstance(update, list):
        items.extend(update)
    else:
        items.append(update)
    return items


def add(current: Any, update: Any) -> Any:
    """``current + update`` (update alone when there is no current value)."""
    if current is None:
        return update
    try:
        return current + update
    except TypeError as exc:
        raise ReducerError(f"reducer 'add' cannot add {type(update).__name__} to "
                           f"{type(current).__name__}",
                           hint="choose a reducer that fits the field (append, merge, replace)") from exc


def merge(current: Any, update: Any) -> Any:
    """Update the current dict with the update's keys."""
    if not isinstance(update, dict):
        return update
    merged = current if isinstance(current, dict) else {}
    merged.update(update)
    return merged


REDUCERS: Mapping[str, Reducer] = {"replace": replace, "append": append, "add": add, "merge": merge}


def resolve_reducers(reducers: Mapping[str, str | Reducer] | None) -> dict[str, Reducer]:
    """Reducers by field, names looked up in ``REDUCERS``; an unknown name raises ReducerError."""
    resolved: dict[str, Reducer] = {}
    for name, reducer in (reducers or {}).items():
        if callable(reducer):
            resolved[name] = reducer
        elif reducer in REDUCERS:
            resolved[name] = REDUCERS[reducer]
        else:
            raise ReducerError(f"unknown reducer {reducer!r} for field {name!r}",
                               hint=f"the reducers are {', '.join(REDUCERS)}")
    return resolved


def parse_reducer_options(options: Iterable[str]) -> dict[str, str]:
    """``["messages=append", ...]`` from the command line as ``{"messages": "append"}``."""
    parsed: dict[str, str] = {}
    for option in options:
        name, sep, reducer = option.partition("=")
        if not sep or not name.strip() or not reducer.strip():
            raise ReducerError(f"--reducer {option!r} is not FIELD=REDUCER",
                               hint=f"for example --reducer messages=append ({', '.join(REDUCERS)})")
        parsed[name.strip()] = reducer.strip()
    resolve_reducers(parsed)
    return parsed


class StateFolder:
    """State rebuilt from deltas: each field last-write-wins unless it has a reducer."""

    def __init__(self, reducers: Mapping[str, str | Reducer] | None = None) -> None:
        self.reducers = resolve_reducers(reducers)
        self.state: dict[str, Any] = {}

    def apply(self, delta: Any) -> None:
        """Fold one node's delta (a dict of field -> written value) in."""
        if not isinstance(delta, dict):
            return
        state, reducers = self.state, self.reducers
        if not reducers:
            state.update(delta)
            return
        for name, value in delta.items():
            reducer = reducers.get(name)
            state[name] = value if reducer is None else reducer(state.get(name), value)

    def truncated_fields(self) -> list[str]:
        """Fields holding a string the writer cut at 2,000 characters (they replay truncated)."""
        return [name for name, value in self.state.items() if _contains(value, _is_truncated)]

    def opaque_fields(self) -> list[str]:
        """Fields holding a ``{"__repr__": ...}`` placeholder for a value JSON could not hold."""
        return [name for name, value in self.state.items() if _contains(value, _is_repr)]


def _is_truncated(value: Any) -> bool:
    return isinstance(value, str) and value.endswith(TRUNCATION_MARKER)


def _is_repr(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and REPR_KEY in value


def _contains(value: Any, test: Callable[[Any], bool]) -> bool:
    """Whether ``value`` or anything nested in it passes ``test``."""
    if test(value):
        return True
    if isinstance(value, dict):
        return any(_contains(item, test) for item in value.values())
    if isinstance(value, list):
        return any(_contains(item, test) for item in value)
    return False
