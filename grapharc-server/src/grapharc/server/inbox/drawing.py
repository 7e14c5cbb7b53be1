"""A server-side SVG drawing of a graph and the path one thread took through it.

``draw_path(path, title=...)`` draws a ``RunPath``: the graph's declared edges (solid when the run took
them, dashed and grey when it did not), the nodes the thread passed through marked (with how many
times each ran), and the node it waits at highlighted. A ``RunPath`` is made from what is recorded:
``path_from_audit`` reads the session store's audit trail (its ``node`` entries, in step order) and
``path_from_trace`` a thread's trace events (``run_start``'s declared edges, each node's ``start``, and
the routes routing nodes recorded on their ``end``); ``declared_edges`` lists a registered graph's
edges and the routes its conditional edges may take.

The layout is hand-written, a layered top-down one (edges that close a cycle are drawn back up on
the right, the rest put each node below its predecessors, and a few barycentre sweeps order each
layer): the graphs drawn here have a few dozen nodes at most, and no well-kept pure-Python layout
library fits (grandalf is unmaintained since 2023; Graphviz is a program to install; networkx lays out
no layered drawing). Every text in the SVG is escaped (node names are user input); the drawing is an
accessible image (``role="img"``, an ``aria-label``, a ``<title>`` and a ``<desc>``) without script.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import escape

from grapharc.runtime.graph import GraphARC
from grapharc.session.records import AuditEntry, AuditKind
from grapharc.trace import schema as ts

START, END = "__start__", "__end__"
NAMES = {START: "START", END: "END"}
Edge = tuple[str, str]

CHAR_WIDTH, NODE_HEIGHT, PADDING = 8.0, 34.0, 16.0
LAYER_GAP, NODE_GAP, MARGIN, LOOP_GAP = 56.0, 28.0, 20.0, 26.0
SWEEPS = 4


@dataclass(frozen=True, slots=True)
class RunPath:
    """What one drawing shows: the graph's edges, the nodes the thread passed through (how many times
    each ran), the edges it took (how many times), and the node it waits at (None: it does not)."""

    edges: tuple[Edge, ...]
    passed: Mapping[str, int] = field(default_factory=dict)
    taken: Mapping[Edge, int] = field(default_factory=dict)
    paused: str | None = None

    def nodes(self) -> list[str]:
        """Every node drawn, in the order first named: START first, END last."""
        named = [name for edge in (*self.edges, *self.taken) for name in edge]
        named += [*self.passed, *([self.paused] if self.paused else [])]
        ordered = list(dict.fromkeys(named))
        return sorted(ordered, key=lambda name: (name != START, name == END))


def declared_edges(builder: GraphARC) -> list[Edge]:
    """A registered graph's edges: its declared ones and joins, and every route its conditional
    edges may take (a router that declares no targets adds none)."""
    edges = [(source, target) for source, target in builder.declared_edges()]
    for source in [START, *builder.nodes]:
        routes = builder.routes_from(source) or frozenset()
        edges += [(source, target) for target in sorted(routes)]
    ends = {source for source, target in edges if target == END}
    edges += [(route.source, END) for route in builder.routes
              if route.mapping is not None and END in route.mapping.values() and route.source not in ends]
    return list(dict.fromkeys(edges))


def path_from_audit(entries: Iterable[AuditEntry], declared: Iterable[Edge] = (),
                    paused: str | None = None) -> RunPath:
    """The path the audit trail's ``node`` entries record (in step order), over ``declared`` edges:
    a node is joined to the nodes of the step before that the declared edges lead to it from (to
    all of them when none does); the paused node follows the last step."""
    steps = [(entry.step or 0, entry.node) for entry in entries
             if entry.kind == AuditKind.NODE and entry.node is not None]
    return _walked(list(declared), steps, (), paused)


def path_from_trace(events: Iterable[Mapping[str, Any]], declared: Iterable[Edge] = (),
                    paused: str | None = None) -> RunPath:
    """The path a thread's trace events record: the root graph's node executions (``start``), its
    declared edges (``run_start``) and the routes its routing nodes recorded (``end``'s ``route``)."""
    edges, routes, steps = list(declared), [], []
    root: str | None = None
    for event in events:
        phase, node = event.get(ts.PHASE), event.get(ts.NODE)
        if phase == ts.RUN_START:
            root = root or event.get(ts.GRAPH)
            edges += [(e[0], e[1]) for e in event.get(ts.EDGES) or () if _is_edge(e)]
        elif not isinstance(node, str) or event.get(ts.GRAPH) != root:
            continue
        elif phase == ts.START and isinstance(event.get(ts.STEP), int):
            steps.append((event[ts.STEP], node))
        elif phase == ts.END and isinstance(event.get(ts.ROUTE), Mapping):
            targets = event[ts.ROUTE].get(ts.ROUTE_TO)
            routes += [(node, str(t)) for t in targets] if isinstance(targets, list) else []
    if paused and steps and steps[-1][1] == paused:
        steps.pop()  # the execution the thread waits in is drawn as the paused node, not as passed
    return _walked(list(dict.fromkeys(edges)), steps, routes, paused)


def _is_edge(edge: Any) -> bool:
    return isinstance(edge, list | tuple) and len(edge) == 2 and all(isinstance(n, str) for n in edge)


def _walked(declared: list[Edge], steps: list[tuple[int, str]], routes: Sequence[Edge],
            paused: str | None) -> RunPath:
    """Join each step's nodes to those of the step before, as ``path_from_audit`` says."""
    known = set(declared) | set(routes)
    passed: dict[str, int] = {}
    taken: dict[Edge, int] = {}
    by_step: dict[int, list[str]] = {}
    for step, node in sorted(steps, key=lambda pair: pair[0]):
        by_step.setdefault(step, []).append(node)
        passed[node] = passed.get(node, 0) + 1
    before = [START]
    layers = [*by_step.values(), *([[paused]] if paused else [])]
    for nodes in layers:
        for node in nodes:
            sources = [s for s in before if (s, node) in known] or before
            for source in sources:
                taken[(source, node)] = taken.get((source, node), 0) + 1
        before = nodes
    if not paused and by_step and any((node, END) in known for node in before):
        for node in before:
            if (node, END) in known:
                taken[(node, END)] = 1
    edges = tuple(dict.fromkeys([*declared, *routes, *taken]))
    return RunPath(edges, passed, taken, paused)


# -- layout --------------------------------------------------------------------------------------

@dataclass(slots=True)
class _Box:
    name: str
    layer: int
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0


def _layout(path: RunPath) -> tuple[dict[str, _Box], set[Edge]]:
    """Each node's box, and the edges that close a cycle (drawn back up on the right)."""
    nodes = path.nodes()
    successors: dict[str, list[str]] = {name: [] for name in nodes}
    for source, target in path.edges:
        if target not in successors[source]:
            successors[source].append(target)
    back = _back_edges(nodes, successors)
    layer = {name: 0 for name in nodes}
    for name in _topological(nodes, successors, back):
        for target in successors[name]:
            if (name, target) not in back:
                layer[target] = max(layer[target], layer[name] + 1)
    if END in layer and len(layer) > 1:  # END at the bottom, below every node
        layer[END] = max(number for name, number in layer.items() if name != END) + 1
    layers: dict[int, list[str]] = {}
    for name in nodes:
        layers.setdefault(layer[name], []).append(name)
    _order(layers, path.edges, back)
    boxes = {name: _Box(name, layer[name], width=_width(path, name)) for name in nodes}
    widest = max((sum(boxes[n].width for n in row) + NODE_GAP * (len(row) - 1) for row in layers.values()),
                 default=0.0)
    for number in sorted(layers):
        row = layers[number]
        x = MARGIN + (widest - sum(boxes[n].width for n in row) - NODE_GAP * (len(row) - 1)) / 2
        for name in row:
            box = boxes[name]
            box.x, box.y = x, MARGIN + number * (NODE_HEIGHT + LAYER_GAP)
            x += box.width + NODE_GAP
    return boxes, back


def _back_edges(nodes: list[str], successors: Mapping[str, list[str]]) -> set[Edge]:
    """The edges a depth-first walk from START (then from each node not reached) finds going back to
    a node still on its path: the ones that close cycles."""
    back: set[Edge] = set()
    state: dict[str, int] = {}  # 1: on the walk's path, 2: done
    for root in nodes:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(successors[root]))]
        while stack:
            name, pending = stack[-1]
            target = next(pending, None)
            if target is None:
                state[name] = 2
                stack.pop()
            elif state.get(target) == 1:
                back.add((name, target))
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(successors[target])))
    return back


def _topological(nodes: list[str], successors: Mapping[str, list[str]], back: set[Edge]) -> list[str]:
    """The nodes in an order where each comes after its predecessors (back edges left out)."""
    incoming = {name: 0 for name in nodes}
    for name in nodes:
        for target in successors[name]:
            if (name, target) not in back:
                incoming[target] += 1
    ready = [name for name in nodes if incoming[name] == 0]
    ordered: list[str] = []
    while ready:
        name = ready.pop(0)
        ordered.append(name)
        for target in successors[name]:
            if (name, target) not in back:
                incoming[target] -= 1
                if incoming[target] == 0:
                    ready.append(target)
    return ordered


def _order(layers: dict[int, list[str]], edges: Iterable[Edge], back: set[Edge]) -> None:
    """Order each layer by the mean position of its neighbours in the layer above, then below."""
    forward = [edge for edge in edges if edge not in back]
    upward = [(target, source) for source, target in forward]
    numbers = sorted(layers)
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        for number in numbers[1:] if downward else numbers[-2::-1]:
            fixed = layers.get(number - 1 if downward else number + 1, [])
            layers[number] = _by_neighbours(layers[number], fixed, forward if downward else upward)


def _by_neighbours(row: list[str], fixed: list[str], links: list[Edge]) -> list[str]:
    """``row`` sorted by the mean position in ``fixed`` of the nodes ``links`` join to each (a node
    joined to none keeps its place)."""
    position = {name: i for i, name in enumerate(fixed)}

    def centre(name: str) -> float:
        near = [position[source] for source, target in links if target == name and source in position]
        return sum(near) / len(near) if near else float(row.index(name))

    return sorted(row, key=centre)


def _width(path: RunPath, name: str) -> float:
    return len(_caption(path, name)) * CHAR_WIDTH + 2 * PADDING


def _caption(path: RunPath, name: str) -> str:
    """A node's text: its name, how many times it ran if more than once, and if the thread waits there."""
    runs = path.passed.get(name, 0)
    caption = NAMES.get(name, name) + (f" ×{runs}" if runs > 1 else "")
    return f"{caption} (waiting)" if name == path.paused else caption


# -- drawing -------------------------------------------------------------------------------------

_STYLE = {
    "passed": 'fill="#e8f0fe" stroke="#1a4b9c" stroke-width="2"',
    "paused": 'fill="#fff1c2" stroke="#8a5300" stroke-width="3"',
    "other": 'fill="#ffffff" stroke="#767676" stroke-width="1" stroke-dasharray="4 3"',
}
_TEXT = {"passed": "#0b2a5b", "paused": "#4a2c00", "other": "#4d4d4d"}


def draw_path(path: RunPath, *, title: str, id_prefix: str = "path") -> str:
    """``path`` as an SVG image (a string to put in a page as it is): ``title`` is its accessible
    name (also its ``<title>``); ``id_prefix`` keeps its element ids apart from another drawing's
    on the same page. Nodes passed through are blue, the paused node amber and thick, the rest
    white and dashed; edges taken are solid (with their count past one), the rest grey and dashed."""
    boxes, back = _layout(path)
    long_loops = sum(1 for s, t in back if boxes[s].layer - boxes[t].layer > 1)
    width = max((b.x + b.width for b in boxes.values()), default=0.0) + MARGIN + LOOP_GAP * long_loops
    height = max((b.y + NODE_HEIGHT for b in boxes.values()), default=0.0) + MARGIN
    description = _description(path)
    prefix = str(escape(id_prefix))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="path-drawing" role="img" '
        f'aria-labelledby="{prefix}-title {prefix}-desc" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" font-family="system-ui, sans-serif" font-size="13">',
        f'<title id="{prefix}-title">{escape(title)}</title>',
        f'<desc id="{prefix}-desc">{escape(description)}</desc>',
        "<defs>", _arrow(f"{prefix}-taken", "#1a4b9c"), _arrow(f"{prefix}-other", "#767676"), "</defs>",
    ]
    loops = 0
    for source, target in path.edges:
        loop = 0
        if (source, target) in back:
            loops += boxes[source].layer - boxes[target].layer > 1
            loop = max(loops, 1)
        taken = path.taken.get((source, target), 0)
        parts.append(_edge(boxes[source], boxes[target], taken, prefix, loop, width))
    parts += [_node(path, box) for box in boxes.values()]
    parts.append("</svg>")
    return "\n".join(parts)


def _description(path: RunPath) -> str:
    """The drawing in words, for people who cannot see it."""
    passed = [f"{name} ({runs} times)" if runs > 1 else name for name, runs in path.passed.items()]
    said = f"Passed through {', '.join(passed)}." if passed else "No node has run yet."
    if path.paused:
        said += f" Waiting at {path.paused}."
    elif (END in path.nodes()) and any(target == END for _, target in path.taken):
        said += " Reached the end."
    return said


def _arrow(marker_id: str, colour: str) -> str:
    return (f'<marker id="{marker_id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')


def _edge(source: _Box, target: _Box, taken: int, prefix: str, loop: int, width: float) -> str:
    """One edge: down from the source's bottom to the target's top; one closing a cycle goes back up,
    from the source's top into the target's bottom when they are a layer apart, else out of the
    source's right side, up along the drawing's right and into the target's right side."""
    colour, kind = ("#1a4b9c", "taken") if taken else ("#767676", "other")
    dash = "" if taken else ' stroke-dasharray="5 4"'
    if loop and source.layer - target.layer > 1:
        x = width - MARGIN - LOOP_GAP * (loop - 1)
        y1, y2 = source.y + NODE_HEIGHT / 2, target.y + NODE_HEIGHT / 2
        d = (f"M{source.x + source.width:.1f},{y1:.1f} C{x:.1f},{y1:.1f} {x:.1f},{y2:.1f} "
             f"{target.x + target.width:.1f},{y2:.1f}")
        label_x, label_y = x + 4, (y1 + y2) / 2
    else:
        up = bool(loop)
        x1 = source.x + source.width * (0.75 if up else 0.5)
        x2 = target.x + target.width * (0.25 if up else 0.5)
        y1, y2 = (source.y, target.y + NODE_HEIGHT) if up else (source.y + NODE_HEIGHT, target.y)
        middle = (y1 + y2) / 2
        d = f"M{x1:.1f},{y1:.1f} C{x1:.1f},{middle:.1f} {x2:.1f},{middle:.1f} {x2:.1f},{y2:.1f}"
        label_x, label_y = (x1 + x2) / 2 + 6, middle
    drawn = (f'<path class="edge {kind}" d="{d}" fill="none" stroke="{colour}" '
             f'stroke-width="{2 if taken else 1}"{dash} marker-end="url(#{prefix}-{kind})"/>')
    if taken > 1:
        drawn += f'<text x="{label_x:.1f}" y="{label_y:.1f}" fill="{colour}">×{taken}</text>'
    return drawn


def _node(path: RunPath, box: _Box) -> str:
    kind = "paused" if box.name == path.paused else "passed" if (
        box.name in path.passed or any(box.name in edge for edge in path.taken)) else "other"
    rounded = NODE_HEIGHT / 2 if box.name in NAMES else 6
    return (f'<g class="node {kind}"><rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" '
            f'height="{NODE_HEIGHT:.0f}" rx="{rounded:.0f}" {_STYLE[kind]}/>'
            f'<text x="{box.x + box.width / 2:.1f}" y="{box.y + NODE_HEIGHT / 2 + 4.5:.1f}" '
            f'text-anchor="middle" fill="{_TEXT[kind]}">{escape(_caption(path, box.name))}</text></g>')
