"""Plain-text views of the trace readers' JSON documents, for a terminal.

Each function takes the document a command prints with ``--json`` and returns text, so
the human view can show nothing the JSON view does not.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from grapharc.observe import events as ev
from grapharc.trace import schema as ts

_SCALARS = (str, int, float, bool)


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.6f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _clock(when: Any) -> str:
    seconds = ev.seconds(when)
    if seconds is None:
        return "-" * 23
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    cells = [header, *[[str(cell) for cell in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                      for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in cells]


_SHOWN = (ts.ACTION, ts.GRAPH, ts.THREAD_ID, ts.STATUS, ts.STOP_REASON, ts.TENANT, ts.MODEL, ts.COPY,
          ts.TOOL, ts.DECISION, ts.RULE_ID, ts.OUTCOME)
"""Scalar fields an event line shows as ``name=value`` (graph and thread on run events only); a
permission line names the tool, the decision and the rule that made it."""
_RUN_ONLY = frozenset({ts.GRAPH, ts.THREAD_ID})


def event_line(event: dict[str, Any]) -> str:
    """One trace event on one line: time, run, attempt, step, phase, node and what it carries."""
    phase = str(event.get(ts.PHASE))
    run = str(event.get(ts.RUN_ID) or "-")[:8]
    parts = [_clock(event.get(ts.TS)), run, f"a{event.get(ts.ATTEMPT, '-')}",
             f"s{event.get(ts.STEP, '-')}", phase.ljust(9)]
    if event.get(ts.NODE) is not None:
        parts.append(str(event[ts.NODE]))
    if isinstance(event.get(ts.DURATION_MS), int | float):
        parts.append(f"{event[ts.DURATION_MS]:.2f}ms")
    if phase != ts.START and event.get(ts.TOKENS) is not None:
        parts.append(f"tokens={event[ts.TOKENS]}")
    if event.get(ts.COST_USD) is not None:
        parts.append(f"cost=${event[ts.COST_USD]}")
    if isinstance(event.get(ts.STATE_DELTA), dict):
        parts.append("writes=" + ",".join(map(str, event[ts.STATE_DELTA])))
    route = event.get(ts.ROUTE)
    if isinstance(route, dict) and isinstance(route.get(ts.ROUTE_TO), list):
        parts.append("route=" + ",".join(map(str, route[ts.ROUTE_TO])))
    if phase == ts.STORE_WRITE:
        parts.append(_store_write(event))
    exception = event.get(ts.EXCEPTION)
    if isinstance(exception, dict):
        parts.append(f"{exception.get(ts.EXCEPTION_TYPE)}: {exception.get(ts.EXCEPTION_MESSAGE)}")
    for key in _SHOWN:
        shown = phase in ts.RUN_PHASES or key not in _RUN_ONLY
        if shown and isinstance(event.get(key), _SCALARS):
            parts.append(f"{key}={event[key]}")
    return "  ".join(parts)


def _store_write(event: dict[str, Any]) -> str:
    """What a ``store_write`` event did: ``put users.ada/m1 24B`` (the value itself is never shown)."""
    namespace = event.get(ts.NAMESPACE)
    where = ".".join(map(str, namespace)) if isinstance(namespace, list) else "?"
    text = f"{event.get(ts.OPERATION, '?')} {where}/{event.get(ts.KEY, '?')}"
    if isinstance(event.get(ts.SIZE_BYTES), int):
        text += f" {event[ts.SIZE_BYTES]}B"
    return text


def render_metrics(doc: dict[str, Any]) -> str:
    """The metrics of one run, or of every run in a trace."""
    lines: list[str] = []
    if "runs" in doc:
        total = doc["total"]
        lines.append(f"{doc['path']}: {total['runs']} run(s), {total['node_executions']} node executions, "
                     f"{total['tokens']['total']} tokens, recorded cost {_usd(total['recorded_cost_usd'])}")
        rows = [[run_id, run["status"], run["node_executions"], run["failed"], run["tokens"]["total"],
                 _usd(run["recorded_cost_usd"]), _ms(run["duration_ms"]["wall"])]
                for run_id, run in doc["runs"].items()]
        lines += _table(["run", "status", "executions", "failed", "tokens", "recorded", "wall ms"], rows)
        if "outside_runs" in doc:
            outside = doc["outside_runs"]
            lines.append(f"outside any run: {outside['events']} events ({outside['admission_events']} "
                         f"admission), {outside['tokens']['total']} tokens")
    else:
        lines += _run_metrics_lines(doc)
    lines += _group_lines(doc, lambda g: [g["runs"], g["node_executions"], g["failed"],
                                          g["tokens"]["total"], _usd(g["recorded_cost_usd"])],
                          ["runs", "executions", "failed", "tokens", "recorded"])
    return "\n".join(lines)


def _run_metrics_lines(doc: dict[str, Any]) -> list[str]:
    tokens = doc["tokens"]
    lines = [
        f"run {doc['run_id']}  graph {doc['graph']}  thread {doc['thread_id']}  attempts {doc['attempts']}",
        f"status: {doc['status']} (stopped: {doc['stop_reason']})",
        f"node executions: {doc['node_executions']} ({doc['completed']} completed, {doc['failed']} failed, "
        f"{doc['interrupted']} interrupted, {doc['unfinished']} unfinished); retries: {doc['retries']}",
        f"tokens: {tokens['total']} = {tokens['nodes']} in nodes + {tokens['outside_nodes']} outside nodes; "
        f"recorded cost {_usd(doc['recorded_cost_usd'])}",
        f"duration: {_ms(doc['duration_ms']['nodes'])} ms in nodes, "
        f"{_ms(doc['duration_ms']['wall'])} ms wall",
    ]
    if doc["tenant"] is not None or doc["labels"]:
        lines.append(f"tenant: {doc['tenant']}  labels: {doc['labels']}")
    rows = [[name, n["executions"], n["completed"], n["failed"], _ms(n["duration_ms"]), _ms(n["mean_ms"]),
             _ms(n["max_ms"]), n["tokens"]] for name, n in doc["nodes"].items()]
    lines += _table(["node", "runs", "ok", "failed", "total ms", "mean ms", "max ms", "tokens"], rows)
    if doc["outside_nodes"]["events"]:
        kinds = ", ".join(f"{kind} x{count}" for kind, count in doc["outside_nodes"]["events"].items())
        lines.append(f"outside nodes: {kinds}; {doc['outside_nodes']['tokens']} tokens")
    if doc["admission_events"]:
        lines.append(f"admission events: {doc['admission_events']} (never counted as node executions)")
    for failure in doc["failures"]:
        lines.append(f"failure: {failure['node']}: {failure['type']} x{failure['count']}, first "
                     f"{failure['first_message']!r} (attempt {failure['first_attempt']}, "
                     f"step {failure['first_step']})")
    return lines


def _group_lines(doc: dict[str, Any], row: Any, header: list[str]) -> list[str]:
    if not doc.get("groups"):
        return []
    rows = [[key, *row(group)] for key, group in doc["groups"].items()]
    return ["", *_table(["group", *header], rows)]


def render_cost(doc: dict[str, Any]) -> str:
    """Spend per run, thread and node; recorded and estimated in separate columns."""
    scope = f"run {doc['run_id']}" if doc["run_id"] is not None else "every run"
    lines = [f"cost of {scope} in {doc['path']} (rate card: {doc['rate_card'] or 'none'})"]
    header = ["", "tokens", "recorded USD", "unrecorded tokens", "estimated USD", "unpriced tokens"]

    def row(label: str, line: dict[str, Any]) -> list[Any]:
        return [label, line["tokens"], _usd(line["recorded_cost_usd"]), line["unrecorded_tokens"],
                _usd(line["estimated_cost_usd"]), line.get("unpriced_tokens", "-")]

    rows = [row("total", doc["total"])]
    rows += [row(f"thread {tid} ({line['runs']} runs)", line) for tid, line in doc["threads"].items()]
    rows += [row(f"run {rid}", line) for rid, line in doc.get("runs", {}).items()]
    if "outside_runs" in doc:
        rows.append(row("outside any run", doc["outside_runs"]))
    rows += [row(f"node {name}", line) for name, line in doc["nodes"].items()]
    rows.append(row("outside nodes", doc["outside_nodes"]))
    rows += [row(f"group {key}", line) for key, line in doc.get("groups", {}).items()]
    lines += _table(header, rows)
    lines += _model_lines(doc["models"])
    return "\n".join(lines)


_NO_MODEL = "(no model named)"


def _model_lines(models: list[dict[str, Any]]) -> list[str]:
    """The table of spend by model, then the models the rate card has no rate for, by name."""
    if not models:
        return []
    rows = [[line["model"] or _NO_MODEL, line["calls"], line["tokens"], _usd(line["estimated_cost_usd"]),
             line.get("unpriced_tokens", "-")] for line in models]
    lines = ["", *_table(["model", "calls", "tokens", "estimated USD", "unpriced tokens"], rows)]
    unpriced = [f"{line['model'] or _NO_MODEL} ({line['calls']} call(s), {line['unpriced_tokens']} tokens)"
                for line in models if line.get("unpriced_tokens")]
    if unpriced:
        lines.append(f"no rate on the card for: {'; '.join(unpriced)}")
    return lines


def render_step(step: dict[str, Any]) -> str:
    """One replayed node execution."""
    text = (f"#{step['index']:<5} step {step['step']!s:<4} a{step['attempt']}  {step['node']:<20} "
            f"{step['status']:<11} {_ms(step['duration_ms']):>9} ms  tokens {step['tokens']}")
    if step["writes"]:
        text += "  writes " + ",".join(step["writes"])
    if step["route"]:
        text += "  route -> " + ",".join(map(str, step["route"].get(ts.ROUTE_TO, [])))
    if step["exception"]:
        text += f"  {step['exception'].get('type')}: {step['exception'].get('message')}"
    return text


def render_replay_header(doc: dict[str, Any]) -> str:
    """A replayed run's identity, outcome and timing: what its step rows and state follow."""
    lines = [
        f"run {doc['run_id']}  graph {doc['graph']}  thread {doc['thread_id']}  attempts {doc['attempts']}",
        f"status: {doc['status']} (stopped: {doc['stop_reason']}); {doc['steps_total']} steps, "
        f"{doc['failures']} failed, {doc['unfinished']} unfinished; {doc['tokens']} tokens",
        f"timing: {_ms(doc['timing']['nodes_ms'])} ms in nodes, {_ms(doc['timing']['wall_ms'])} ms wall",
    ]
    if doc["reducers"]:
        lines.append(f"reducers: {', '.join(doc['reducers'])}")
    if doc["truncated_fields"]:
        lines.append(f"truncated when written (over 2,000 characters): {', '.join(doc['truncated_fields'])}")
    if doc["opaque_fields"]:
        lines.append(f"not JSON when written (a repr stands in): {', '.join(doc['opaque_fields'])}")
    return "\n".join(lines)


def render_state(state: dict[str, Any]) -> str:
    """The folded state as indented JSON, its strings as written (a newline in a value is ``\\n``
    once, as JSON writes it); every line break in the result is the indentation's."""
    return "state:\n" + json.dumps(state, indent=2, ensure_ascii=False, default=str)


def render_diff(doc: dict[str, Any]) -> str:
    """What differs between two runs, section by section."""
    a, b = doc["runs"]["a"], doc["runs"]["b"]
    sections = [name for name, key in (("path", "node_path"), ("state", "state"), ("tokens", "tokens"),
                                       ("outcome", "outcome")) if not doc[key]["same"]]
    lines = [f"runs {a} (a) and {b} (b) " + (f"differ in: {', '.join(sections)}" if sections
                                             else "are identical")]
    path = doc["node_path"]
    if not path["same"]:
        lines.append(f"path: diverges at execution {path['first_divergence'] + 1} "
                     f"(lengths a {path['length']['a']}, b {path['length']['b']})")
        lines.append("  a: " + " -> ".join(path["a"]))
        lines.append("  b: " + " -> ".join(path["b"]))
    state = doc["state"]
    for name, change in state["changed"].items():
        lines.append(f"state {name}: {json.dumps(change['a'], default=str)} -> "
                     f"{json.dumps(change['b'], default=str)}")
    for name in state["only_a"]:
        lines.append(f"state {name}: only in a")
    for name in state["only_b"]:
        lines.append(f"state {name}: only in b")
    tokens = doc["tokens"]
    if not tokens["same"]:
        lines.append(f"tokens: a {tokens['a']}, b {tokens['b']}")
        lines += [f"  node {name}: a {t['a']}, b {t['b']}" for name, t in tokens["nodes"].items()]
    outcome = doc["outcome"]
    if not outcome["same"]:
        lines.append(f"outcome: a {outcome['a']}, b {outcome['b']}")
    return "\n".join(lines)
