"""``grapharc viz``: a Mermaid flowchart of the path a run actually took.

An edge is drawn from a node execution of one step to a node execution of the next step of
the same graph when the trace says the first led to the second: the run's declared edges
(``run_start.edges``) or the route a routing node recorded on its ``end`` event (the key its
router returned and the node(s) it sent the run to). So chains, loops, fan-out, fan-in and
independent parallel branches are drawn as they ran. Where the trace says nothing (a
subgraph's lane, or a trace without that record) every execution of one step is joined to
every execution of the next. A join waiting on branches of different lengths is drawn from
the branch that finished last. A repeated edge carries its count, a node that ran more than
once its number of executions, and a node that failed is styled as failed. Subgraph nodes
(whose steps are numbered from 1 inside each invocation) are drawn in a Mermaid subgraph of
their own.

One streaming pass; memory is per node, per distinct edge and per step's width.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from grapharc.observe.errors import UnknownRunError
from grapharc.trace import schema as ts
from grapharc.trace.reader import TraceReader

_STOPPING = frozenset({ts.ERROR, ts.INTERRUPT, ts.PARENT_COMMAND})
START_NODE = "__start__"
END_NODE = "__end__"

Successors = dict[str, set[str]]
"""Where each node is known to lead: node name -> the names of the nodes after it."""


@dataclass(slots=True)
class _Lane:
    """The step being walked in one graph: its node executions and those of the step before,
    with where each is known to have routed."""

    step: Any = None
    current: list[str] = field(default_factory=list)
    previous: list[str] = field(default_factory=list)
    routed: Successors = field(default_factory=dict)
    routed_before: Successors = field(default_factory=dict)
    stopped: bool = False


@dataclass
class ExecutedPath:
    """Nodes and edge counts of one run's executed path, per graph."""

    path: str
    run_id: str
    root: str | None
    executions: dict[tuple[str | None, str], int] = field(default_factory=dict)
    failed: set[tuple[str | None, str]] = field(default_factory=set)
    edges: dict[tuple[str | None, str, str], int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def mermaid(self) -> str:
        """The path as a Mermaid ``flowchart TD``."""
        ids: dict[tuple[str | None, str], str] = {}
        lines = ["flowchart TD"]
        graphs = list(dict.fromkeys([self.root, *(graph for graph, _ in self.executions)]))
        for number, graph in enumerate(graphs):
            indent = "    "
            if graph != self.root:
                lines.append(f'    subgraph g{number}["{_escape(str(graph))}"]')
                indent = "        "
            for key in self._lane_nodes(graph):
                ids[key] = node_id = f"n{len(ids)}"
                lines.append(f"{indent}{node_id}{self._shape(key)}")
            if graph != self.root:
                lines.append("    end")
        for (graph, source, target), count in self.edges.items():
            label = f"|{count}|" if count > 1 else ""
            lines.append(f"    {ids[(graph, source)]} -->{label} {ids[(graph, target)]}")
        failed = [ids[key] for key in self.failed]
        if failed:
            lines.append("    classDef failed fill:#fdd,stroke:#c00,color:#600")
            lines.append(f"    class {','.join(failed)} failed")
        return "\n".join(lines) + "\n"

    def _lane_nodes(self, graph: str | None) -> list[tuple[str | None, str]]:
        """Every node drawn in ``graph``'s lane: START, its executed nodes, END if reached."""
        nodes = [(graph, START_NODE)] if any(e[0] == graph and e[1] == START_NODE for e in self.edges) else []
        nodes += [key for key in self.executions if key[0] == graph]
        if any(e[0] == graph and e[2] == END_NODE for e in self.edges):
            nodes.append((graph, END_NODE))
        return nodes

    def _shape(self, key: tuple[str | None, str]) -> str:
        name = key[1]
        if name == START_NODE:
            return "((START))"
        if name == END_NODE:
            return "((END))"
        count = self.executions[key]
        suffix = f" ×{count}" if count > 1 else ""
        return f'["{_escape(name)}{suffix}"]'

    def to_document(self) -> dict[str, Any]:
        """The JSON document ``grapharc viz --json`` prints."""
        return {
            "ok": True, "path": self.path, "run_id": self.run_id, "graph": self.root,
            "mermaid": self.mermaid(),
            "nodes": [{"graph": graph, "node": node, "executions": count,
                       "failed": (graph, node) in self.failed}
                      for (graph, node), count in self.executions.items()],
            "edges": [{"graph": graph, "from": source, "to": target, "count": count}
                      for (graph, source, target), count in self.edges.items()],
            **({"warnings": self.warnings} if self.warnings else {}),
        }


def _escape(text: str) -> str:
    """A label Mermaid shows as written: quotes and control characters as entity codes."""
    text = text.replace('"', "#quot;")
    return "".join(ch if ch.isprintable() else f"#{ord(ch)};" for ch in text)


class _PathTracer:
    """Folds node start and closing events into an ExecutedPath."""

    def __init__(self, result: ExecutedPath) -> None:
        self.result = result
        self.lanes: dict[str | None, _Lane] = {}
        self.declared: dict[str | None, Successors] = {}
        self.ended = False

    def declare(self, graph: str | None, edges: Any) -> None:
        """Record a graph's declared edges (``run_start.edges``), if they are readable."""
        if not isinstance(edges, list):
            return
        successors: Successors = {}
        for edge in edges:
            if isinstance(edge, list) and len(edge) == 2 and all(isinstance(name, str) for name in edge):
                successors.setdefault(edge[0], set()).add(edge[1])
        self.declared[graph] = successors

    def start(self, graph: str | None, node: str, step: Any) -> None:
        result = self.result
        if result.root is None:
            result.root = graph
        lane = self.lanes.get(graph)
        if lane is None:
            lane = self.lanes[graph] = _Lane()
        if lane.step is not None and step != lane.step:
            if _before(step, lane.step):  # a subgraph invoked again numbers its steps from 1 anew
                self._close(graph, lane)
                lane.previous, lane.routed_before = [], {}
            else:
                self._leave(graph, lane)
            lane.current, lane.routed = [], {}
            lane.stopped = False
        lane.step = step
        lane.current.append(node)
        for source in self._sources(graph, lane, node):
            self._edge(graph, source, node)
        key = (graph, node)
        result.executions[key] = result.executions.get(key, 0) + 1

    def routed(self, graph: str | None, node: str, route: Any) -> None:
        """A routing node's ``end`` recorded where it sent the run."""
        lane = self.lanes.get(graph)
        targets = route.get(ts.ROUTE_TO) if isinstance(route, dict) else None
        if lane is not None and isinstance(targets, list):
            lane.routed.setdefault(node, set()).update(str(target) for target in targets)

    def stopped(self, graph: str | None, node: str, failed: bool) -> None:
        """A node failed or was interrupted: its graph does not go on to END from this step."""
        if failed:
            self.result.failed.add((graph, node))
        lane = self.lanes.get(graph)
        if lane is not None:
            lane.stopped = True

    def finish(self) -> None:
        for graph, lane in self.lanes.items():
            if graph != self.result.root or self.ended:
                self._close(graph, lane)

    def _known(self, graph: str | None, routed: Successors, node: str) -> set[str] | None:
        """Where an execution of ``node`` led, if the trace says (declared edges or its route)."""
        declared = self.declared.get(graph)
        route = routed.get(node)
        if declared is None and route is None:
            return None
        return (declared or {}).get(node, set()) | (route or set())

    def _sources(self, graph: str | None, lane: _Lane, node: str) -> list[str]:
        """The executions of the step before that led to ``node`` (all of them if unknown)."""
        candidates = lane.previous or [START_NODE]
        routed = lane.routed_before
        leading = [source for source in candidates
                   if node in (self._known(graph, routed, source) or ())]
        return leading or candidates

    def _leave(self, graph: str | None, lane: _Lane) -> None:
        """Move on from the current step; an execution known to have routed to END gets its edge."""
        for node in lane.current:
            known = self._known(graph, lane.routed, node)
            if known is not None and END_NODE in known:
                self._edge(graph, node, END_NODE)
        lane.previous, lane.routed_before = lane.current, lane.routed

    def _close(self, graph: str | None, lane: _Lane) -> None:
        if lane.stopped:
            return
        for node in lane.current:
            known = self._known(graph, lane.routed, node)
            if known is None or END_NODE in known or not known:
                self._edge(graph, node, END_NODE)

    def _edge(self, graph: str | None, source: str, target: str) -> None:
        key = (graph, source, target)
        self.result.edges[key] = self.result.edges.get(key, 0) + 1


def _before(step: Any, other: Any) -> bool:
    try:
        return bool(step < other)
    except TypeError:
        return False


def viz(path: str | os.PathLike[str], run_id: str) -> ExecutedPath:
    """The executed path of ``run_id`` in the trace at ``path``."""
    reader = TraceReader(path, run_id=run_id)
    result = ExecutedPath(reader.name, run_id, None)
    tracer = _PathTracer(result)
    seen = False
    for event in reader:
        seen = True
        phase = event.get(ts.PHASE)
        node = event.get(ts.NODE)
        if phase == ts.RUN_START and result.root is None:
            result.root = event.get(ts.GRAPH)
            tracer.declare(result.root, event.get(ts.EDGES))
        elif phase == ts.RUN_END:
            tracer.ended = True
        elif node is None or phase == ts.ADMISSION:
            continue
        elif phase == ts.START:
            tracer.start(event.get(ts.GRAPH), node, event.get(ts.STEP))
        elif phase == ts.END and ts.ROUTE in event:
            tracer.routed(event.get(ts.GRAPH), node, event[ts.ROUTE])
        elif phase in _STOPPING:
            tracer.stopped(event.get(ts.GRAPH), node, failed=phase == ts.ERROR)
    if not seen:
        raise UnknownRunError(reader.name, run_id)
    tracer.finish()
    result.warnings = reader.warnings()
    return result
