"""Compile-time checks over the declared topology: write conflicts and (for dag=True) cycles.

Plain LangGraph discovers two parallel writers of a reducer-less field only when it
happens, at run time; here a plain-edge fan-out whose branches may both write such a
field is refused at compile() naming both nodes and the field. The admission gate asks
the same question of a proposal with :func:`superstep_masks`, which knows every superstep
a node of an acyclic plain-edge graph may run in, and the same :func:`clashing_writers`.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping

from langgraph.constants import END, START

from grapharc.runtime.errors import DagViolationError, WriteConflictError


def clashing_writers(
    runs_with: Mapping[str, int],
    writes: Mapping[str, frozenset[str]],
    reducer_fields: frozenset[str],
) -> list[tuple[str, str, str]]:
    """Each ``(earlier node, later node, field)`` that may run together and both write ``field``.

    ``runs_with`` maps a node to a bitmask: two nodes may run in one superstep when their
    masks share a bit. Fields with a reducer merge parallel writes, so they never clash.
    Each later writer is named once per field, against the first earlier writer it meets.
    """
    writers: dict[str, list[tuple[str, int]]] = defaultdict(list)
    union: dict[str, int] = defaultdict(int)
    clashes: list[tuple[str, str, str]] = []
    for node, mask in runs_with.items():
        for field in sorted(writes.get(node, frozenset()) - reducer_fields):
            if union[field] & mask:
                partner = next(name for name, other in writers[field] if other & mask)
                clashes.append((partner, node, field))
            writers[field].append((node, mask))
            union[field] |= mask
    return clashes


def check_write_conflicts(
    edges: Iterable[tuple[str, str]],
    writes: Mapping[str, frozenset[str]],
    reducer_fields: frozenset[str],
) -> None:
    """Refuse sibling targets of one source that may both write a reducer-less field."""
    siblings: dict[str, int] = defaultdict(int)
    sources: dict[str, int] = {}
    for source, target in edges:
        if target != END:
            siblings[target] |= 1 << sources.setdefault(source, len(sources))
    for first, second, field in clashing_writers(siblings, writes, reducer_fields):
        raise WriteConflictError(first, second, field)


def superstep_masks(edges: Iterable[tuple[str, str]]) -> dict[str, int] | None:
    """For a graph of plain edges: each node's supersteps as a bitmask (bit k: step k + 1).

    A node runs one step after any predecessor did, so its steps are the lengths of the
    paths reaching it from START. None when the edges have a cycle (the steps are unbounded).
    """
    successors: dict[str, list[str]] = defaultdict(list)
    indegree: dict[str, int] = defaultdict(int)
    for source, target in edges:
        if target != END:
            successors[source].append(target)
            indegree[target] += 1
    masks: dict[str, int] = defaultdict(int, {START: 1})
    ready = deque(node for node in successors if indegree[node] == 0)
    ordered = 0
    while ready:
        node = ready.popleft()
        ordered += 1
        for target in successors[node]:
            masks[target] |= masks[node] << 1
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    if ordered < len(set(successors) | set(indegree)):
        return None
    return {node: mask >> 1 for node, mask in masks.items() if node != START}


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
