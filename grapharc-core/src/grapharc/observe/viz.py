"""``grapharc viz``: a Mermaid flowchart of the path a run actually took.

The trace records which nodes ran at which step (LangGraph's superstep, shifted so steps
keep rising across attempts), not which edge fired. An edge is drawn from every node
execution of one step to every node execution of the next step of the same graph, which
is exact for chains, loops, fan-out and fan-in; two independent parallel branches are drawn
crossed. A repeated edge carries its count, a node that ran more than once its number of
executions, and a node that failed is styled as failed. Subgraph nodes (whose steps are
numbered from 1 inside each invocation) are drawn in a Mermaid subgraph of their own.

One streaming pass; memory is per node, per distinct edge and per step's width.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from grapharc.observe import events as ev
from grapharc.observe.errors import UnknownRunError
from grapharc.observe.reader import TraceReader

_STOPPING = frozenset({ev.ERROR, ev.INTERRUPT, ev.PARENT_COMMAND})
START_NODE = "__start__"
END_NODE = "__end__"


@dataclass(slots=True)
class _Lane:
    """The step being walked in one graph, and the node executions of it and the step before."""

    step: Any = None
    current: list[str] = field(default_factory=list)
    previous: list[str] = field(default_factory=list)
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
    return text.replace('"', "#quot;")


class _PathTracer:
    """Folds node start and closing events into an ExecutedPath."""

    def __init__(self, result: ExecutedPath) -> None:
        self.result = result
        self.lanes: dict[str | None, _Lane] = {}
        self.ended = False

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
                lane.previous = []
            else:
                lane.previous = lane.current
            lane.current = []
            lane.stopped = False
        lane.step = step
        lane.current.append(node)
        sources = lane.previous or [START_NODE]
        for source in sources:
            self._edge(graph, source, node)
        key = (graph, node)
        result.executions[key] = result.executions.get(key, 0) + 1

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

    def _close(self, graph: str | None, lane: _Lane) -> None:
        if not lane.stopped:
            for node in lane.current:
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
    result = ExecutedPath(str(path), run_id, None)
    tracer = _PathTracer(result)
    seen = False
    for event in reader:
        seen = True
        kind = event.get("event")
        node = event.get("node")
        if kind == ev.RUN_START and result.root is None:
            result.root = event.get("graph")
        elif kind == ev.RUN_END:
            tracer.ended = True
        elif node is None or event.get("phase") == ev.ADMISSION_PHASE:
            continue
        elif kind == ev.START:
            tracer.start(event.get("graph"), node, event.get("step"))
        elif kind in _STOPPING:
            tracer.stopped(event.get("graph"), node, failed=kind == ev.ERROR)
    if not seen:
        raise UnknownRunError(path, run_id)
    tracer.finish()
    result.warnings = reader.warnings()
    return result
