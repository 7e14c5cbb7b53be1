"""Compile-time checks over the declared topology: write conflicts and (for dag=True) cycles.

Plain LangGraph discovers two parallel writers of a reducer-less field only when it
happens, at run time; here a plain-edge fan-out whose branches may both write such a
field is refused at compile() naming both nodes and the field.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from langgraph.constants import END

from grapharc.runtime.errors import DagViolationError, WriteConflictError


def check_write_conflicts(
    edges: Iterable[tuple[str, str]],
    writes: Mapping[str, frozenset[str]],
    reducer_fields: frozenset[str],
) -> None:
    """Refuse sibling targets of one source that may both write a reducer-less field."""
    targets: dict[str, list[str]] = defaultdict(list)
    for source, target in edges:
        if target != END and target not in targets[source]:
            targets[source].append(target)
    for siblings in targets.values():
        for i, first in enumerate(siblings):
            for second in siblings[i + 1 :]:
                shared = writes.get(first, frozenset()) & writes.get(second, frozenset())
                clashing = sorted(shared - reducer_fields)
                if clashing:
                    raise WriteConflictError(first, second, clashing[0])


def check_acyclic(graph: str, edges: Iterable[tuple[str, str]]) -> None:
    """Refuse a cycle in a dag=True graph, naming the nodes on it."""
    successors: dict[str, list[str]] = defaultdict(list)
    for source, target in edges:
        successors[source].append(target)
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for root in list(successors):
        if root in state:
            continue
        path: list[str] = [root]
        stack = [iter(successors[root])]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            seen = state.get(nxt)
            if seen == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise DagViolationError(
                    f"dag graph {graph!r} has a cycle: {' -> '.join(cycle)}",
                    hint="declare the graph without dag=True once the cycle is earned",
                )
            if seen is None:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(successors.get(nxt, ())))
