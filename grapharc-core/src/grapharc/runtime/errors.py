"""The kernel's errors: each names the node, field, key or type it is about.

They derive from ``GraphARCError`` so the CLI prints them as one line, and carry
their subjects as attributes so callers can act on them without parsing text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grapharc.errors import GraphARCError


def quoted_names(items: Iterable[Any]) -> str:
    """Render a set of names sorted and quoted, or '(none)' when empty."""
    names = sorted(str(item) for item in items)
    return ", ".join(repr(name) for name in names) if names else "(none)"


def describe_value(value: Any, limit: int = 80) -> str:
    """A short 'type value' rendering of what arrived, for error messages."""
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"


class GraphBuildError(GraphARCError):
    """The graph as declared cannot be built; raised by add_* or compile()."""


class UnknownFieldError(GraphBuildError):
    """A write, an input or an update names a field the state schema does not have."""

    def __init__(self, where: str, field: str, fields: Iterable[str]) -> None:
        self.where, self.field, self.fields = where, field, frozenset(fields)
        super().__init__(
            f"{where}: state has no field {field!r} (fields: {quoted_names(self.fields)})",
            hint="declare the field on the state model or fix the name",
        )


class UnknownNodeError(GraphBuildError):
    """An edge, route or command names a node the graph does not have."""

    def __init__(self, where: str, node: str, nodes: Iterable[str]) -> None:
        self.where, self.node, self.nodes = where, node, frozenset(nodes)
        super().__init__(
            f"{where}: no node named {node!r} (nodes: {quoted_names(self.nodes)})",
            hint="add the node before compile() or fix the name",
        )


class DagViolationError(GraphBuildError):
    """A graph declared with dag=True was given a conditional edge, a fan-out or a cycle."""


class WriteConflictError(GraphBuildError):
    """Two nodes that run in the same superstep may write one field that has no reducer."""

    def __init__(self, first: str, second: str, field: str) -> None:
        self.nodes, self.field = (first, second), field
        super().__init__(
            f"nodes {first!r} and {second!r} run in the same superstep and both may write "
            f"{field!r}, which has no reducer",
            hint=f"give {field!r} a reducer (Annotated[..., operator.add]) or drop it from one node's writes",
        )


class RouteMappingError(GraphBuildError):
    """A conditional edge's mapping is empty, names unknown nodes or misses router keys."""


class WritePermissionError(GraphARCError):
    """A node wrote a field it did not declare in ``writes=``."""

    def __init__(self, node: str, field: str, declared: Iterable[str]) -> None:
        self.node, self.field, self.declared = node, field, frozenset(declared)
        super().__init__(
            f"node {node!r} wrote {field!r} but declared writes={{{quoted_names(self.declared)}}}",
            hint=f"add {field!r} to the node's writes= or stop writing it",
        )


class StateTypeError(GraphARCError):
    """A value written to state does not fit the field's declared type or validators."""

    def __init__(
        self,
        node: str,
        field: str,
        expected: str,
        value: Any,
        detail: str,
        *,
        writer: str | None = None,
    ) -> None:
        self.node, self.field, self.expected, self.value = node, field, expected, value
        who = writer or f"node {node!r}"
        super().__init__(
            f"{who} wrote {field!r}: expected {expected}, got {describe_value(value)} ({detail})",
            hint="return a value of the declared type",
        )


class NodeOutputError(GraphARCError):
    """A node returned something other than a dict of writes, a Command or None."""

    def __init__(self, node: str, value: Any) -> None:
        self.node, self.value = node, value
        super().__init__(
            f"node {node!r} returned {describe_value(value)}; expected a dict of writes, a Command or None",
            hint="return {'field': value} for the fields the node declared",
        )


class GraphRoutingError(GraphARCError):
    """A router or a Command chose a destination the graph does not have."""

    def __init__(self, node: str, key: Any, keys: Iterable[Any]) -> None:
        self.node, self.key, self.keys = node, key, frozenset(keys)
        super().__init__(
            f"routing after node {node!r} chose {key!r}, which is not one of: {quoted_names(self.keys)}",
            hint="return one of the mapping's keys or add the key to the mapping",
        )


class MissingRunContextError(GraphARCError):
    """A node ran outside a GraphARC run, e.g. through ``compiled.inner.invoke()``."""

    def __init__(self, node: str) -> None:
        self.node = node
        super().__init__(
            f"node {node!r} ran without a GraphARC run context (no budget, no trace)",
            hint="run the graph through the compiled GraphARC (invoke/stream/ainvoke/astream); "
            ".inner is for inspection only",
        )


class AsyncNodeError(GraphARCError):
    """A sync entry point was asked to run a graph that contains async nodes."""

    def __init__(self, graph: str, nodes: Iterable[str]) -> None:
        self.graph, self.nodes = graph, frozenset(nodes)
        super().__init__(
            f"graph {graph!r} has async nodes or routers ({quoted_names(self.nodes)}); "
            "a sync entry point cannot run them",
            hint="use ainvoke / astream / astream_events",
        )


class RunInputError(GraphARCError):
    """A run's input is neither state values nor a bare resume value."""


class MissingThreadIdError(RunInputError):
    """A run of a checkpointed graph without ``config['configurable']['thread_id']``."""

    def __init__(self, graph: str) -> None:
        self.graph = graph
        super().__init__(
            f"graph {graph!r} has a checkpointer, so a run needs config['configurable']['thread_id']",
            hint="pass config={'configurable': {'thread_id': '...'}}",
        )


class NoCheckpointerError(GraphARCError):
    """A state operation (``update_state``) on a graph compiled without a checkpointer."""

    def __init__(self, graph: str) -> None:
        self.graph = graph
        super().__init__(f"graph {graph!r} has no checkpointer, so it has no state to update",
                         hint="compile(checkpointer=...)")


class UnsupportedStreamError(GraphARCError):
    """An astream_events version GraphARC does not carry (v3 returns a stream object)."""
