"""What admitted proposals are built against: the run's state and the fields each kind writes.

The materialiser builds every admitted proposal over one state schema, giving each node
the writes its surface declared for the kind (else the kind's own ``writes``). The
admission checker reads the same target, so before anything exists it refuses what the
build or the run would refuse: a write to a field the state lacks, two nodes that may run
in one superstep writing one field without a reducer, a nested scope writing a field
with one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from grapharc.planner.registry import NodeRegistry
from grapharc.runtime.errors import GraphBuildError


@dataclass(frozen=True)
class BuildTarget:
    """The state schema, its fields and reducer fields, and the writes declared per kind."""

    registry: NodeRegistry
    state_schema: type[BaseModel]
    declared_writes: Mapping[str, frozenset[str]]
    fields: frozenset[str]
    reducer_fields: frozenset[str]

    @classmethod
    def of(cls, registry: NodeRegistry, state_schema: type[BaseModel],
           writes: Mapping[str, Iterable[str]] | None = None) -> BuildTarget:
        """The target for ``registry``'s kinds over ``state_schema``, with ``writes`` per kind."""
        from langgraph.graph import StateGraph

        from grapharc.runtime.state import channel_reducers

        if not (isinstance(state_schema, type) and issubclass(state_schema, BaseModel)):
            raise GraphBuildError(f"state_schema must be a pydantic model class, got {state_schema!r}",
                                  hint="subclass grapharc.GraphARCState")
        reducers = channel_reducers(StateGraph(state_schema).channels)
        return cls(registry, state_schema,
                   {kind: frozenset(fields) for kind, fields in (writes or {}).items()},
                   frozenset(state_schema.model_fields), frozenset(reducers))

    def writes_of(self, kind: str) -> frozenset[str]:
        """The fields a node of ``kind`` may write: the declared writes, else the kind's own."""
        if kind in self.declared_writes:
            return self.declared_writes[kind]
        return frozenset(self.registry.get(kind).writes)
