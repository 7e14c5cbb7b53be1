"""The private names of its dependencies grapharc-core uses, checked against the versions installed.

Each has no public form. grapharc-core's pyproject.toml caps the dependency to the minor
release these tests passed on, and each test fails naming the dependency and its version when
a name is gone or no longer does what GraphARC takes it to do: lifting a cap starts here.
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import version
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph

LIFECYCLE = "grapharc.runtime.lifecycle"
SERDE = "grapharc.runtime.serde"


def changed(dist: str, what: str, user: str) -> str:
    """The failure naming the dependency, its version, what changed and who relies on it."""
    return (f"{dist} {version(dist)} changed {what}, which {user} relies on: adapt {user}, then move "
            f"grapharc-core's cap on {dist} (grapharc-core/pyproject.toml) to this release")


def private(dist: str, module: str, name: str, user: str) -> Any:
    """``module.name``, or a failure naming ``dist`` and its version if it is gone."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        pytest.fail(changed(dist, f"{module}.{name} (it is gone)", user))


class Nothing(TypedDict, total=False):
    unused: int


def _two_steps(checkpointer: InMemorySaver) -> Any:
    graph = StateGraph(Nothing)
    graph.add_node("first", lambda state: {})
    graph.add_node("second", lambda state: {})
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    return graph.compile(checkpointer=checkpointer)


def test_langgraphs_default_recursion_limit_is_still_a_number():
    limit = private("langgraph", "langgraph._internal._config", "DEFAULT_RECURSION_LIMIT", LIFECYCLE)
    assert isinstance(limit, int) and limit > 0, \
        changed("langgraph", f"DEFAULT_RECURSION_LIMIT (now {limit!r})", LIFECYCLE)


def test_langgraphs_durability_config_key_sets_a_runs_durability():
    key = private("langgraph", "langgraph._internal._constants", "CONFIG_KEY_DURABILITY", LIFECYCLE)
    saved = {}
    for durability in ("sync", "exit"):
        saver = InMemorySaver()
        config = {"configurable": {"thread_id": "t", key: durability}}
        _two_steps(saver).invoke({}, config)
        saved[durability] = len(list(saver.list(config)))
    assert saved["exit"] < saved["sync"], \
        changed("langgraph", f"CONFIG_KEY_DURABILITY ({key!r}: checkpoints saved {saved})", LIFECYCLE)


def test_the_serializer_attributes_serde_reads_still_hold_its_allowlists_and_hook():
    accepted = set(inspect.signature(JsonPlusSerializer).parameters)
    expected = {"pickle_fallback", "allowed_json_modules", "allowed_msgpack_modules", "__unpack_ext_hook__"}
    assert expected <= accepted, \
        changed("langgraph-checkpoint", f"JsonPlusSerializer's parameters (now {sorted(accepted)})", SERDE)
    allow_all = JsonPlusSerializer(allowed_msgpack_modules=True)
    listed = JsonPlusSerializer(allowed_msgpack_modules=[("pkg", "Kind")],
                                allowed_json_modules=[("pkg", "json")])
    hooked = JsonPlusSerializer(__unpack_ext_hook__=lambda code, data: None)
    found = {
        "_allowed_msgpack_modules": (getattr(allow_all, "_allowed_msgpack_modules", None),
                                     getattr(listed, "_allowed_msgpack_modules", None)),
        "_allowed_json_modules": getattr(listed, "_allowed_json_modules", None),
        "_custom_unpack_ext_hook": (getattr(allow_all, "_custom_unpack_ext_hook", None),
                                    getattr(hooked, "_custom_unpack_ext_hook", None)),
    }
    assert found == {"_allowed_msgpack_modules": (True, {("pkg", "Kind")}),
                     "_allowed_json_modules": {("pkg", "json")},
                     "_custom_unpack_ext_hook": (False, True)}, \
        changed("langgraph-checkpoint", f"JsonPlusSerializer's private attributes (now {found})", SERDE)


def test_an_allow_everything_serializer_still_ignores_an_added_allowlist():
    """Why ``serde`` rebuilds such a serializer instead of calling ``with_msgpack_allowlist``."""
    allow_all = JsonPlusSerializer(allowed_msgpack_modules=True)
    assert allow_all.with_msgpack_allowlist([("pkg", "Kind")]) is allow_all, \
        changed("langgraph-checkpoint", "with_msgpack_allowlist of an allow-all JsonPlusSerializer", SERDE)
