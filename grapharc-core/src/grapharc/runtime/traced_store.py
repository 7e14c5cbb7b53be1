"""The store a GraphARC graph's nodes see: LangGraph's ``BaseStore``, every write on the trace.

``compile(store=...)`` hands LangGraph a ``TracedStore`` over the caller's store, so a
node's ``store`` parameter and ``langgraph.config.get_store()`` both reach it. Each put or
delete a node makes is a ``store_write`` event of the run's trace once the store has taken it:
the node and step, the namespace, the key, the operation, the value's size in UTF-8 JSON
bytes and its time to live, and the value itself only when the graph was compiled with
``trace_store_values=True`` (values may hold what a trace should not). Reads pass through
unrecorded, and so do writes made outside a run (no node made them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config
from langgraph.store.base import BaseStore, Op, PutOp, Result

from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.errors import GraphBuildError
from grapharc.trace import schema
from grapharc.trace.writer import node_identity


def value_size(value: Any) -> int:
    """The value's size as compact UTF-8 JSON, in bytes."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode())


class TracedStore(BaseStore):
    """``inner`` (any ``BaseStore``), whose writes from a graph ``graph``'s nodes are traced."""

    def __init__(self, inner: BaseStore, *, graph: str, values: bool = False) -> None:
        self.inner = inner
        self.graph = graph
        self.values = values
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """The inner store's ``batch``; then its writes go on the trace."""
        listed = list(ops)
        results = self.inner.batch(listed)
        self._record(listed)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The inner store's ``abatch``; then its writes go on the trace."""
        listed = list(ops)
        results = await self.inner.abatch(listed)
        self._record(listed)
        return results

    def _record(self, ops: list[Op]) -> None:
        """Write a ``store_write`` event for each ``PutOp``, if a node of a traced run made them."""
        run, config = CURRENT_RUN.get(), var_child_runnable_config.get()
        metadata = (config or {}).get("metadata") or {}
        if run is None or run.trace is None or "langgraph_node" not in metadata:
            return
        step = run.shift + int(metadata.get("langgraph_step", 0))
        for op in ops:
            if not isinstance(op, PutOp):
                continue
            event = node_identity(schema.STORE_WRITE, run.run_id, run.thread_id, run.attempt, self.graph,
                                  str(metadata["langgraph_node"]), step)
            run.trace.write(event, self._fields(op))

    def _fields(self, op: PutOp) -> dict[str, Any]:
        fields: dict[str, Any] = {schema.NAMESPACE: list(op.namespace), schema.KEY: op.key}
        if op.value is None:
            fields[schema.OPERATION] = "delete"
            return fields
        fields[schema.OPERATION] = "put"
        fields[schema.SIZE_BYTES] = value_size(op.value)
        if op.ttl is not None:
            fields[schema.TTL_MINUTES] = op.ttl
        if self.values:
            fields[schema.VALUE] = dict(op.value)
        return fields


def traced_store(store: Any, *, graph: str, values: bool) -> Any:
    """``store`` wrapped for ``compile``: a ``BaseStore`` in a ``TracedStore``, ``None`` as is."""
    if store is None:
        return None
    if not isinstance(store, BaseStore):
        raise GraphBuildError(f"compile(store=...) takes a LangGraph BaseStore, not {type(store).__name__}",
                              hint="open one with grapharc.memory.longterm.open_long_term_store('memory:')")
    return TracedStore(store, graph=graph, values=values)
