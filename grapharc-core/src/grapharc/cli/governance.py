"""What ``plan``, ``run`` and ``kinds`` do: parse, resolve the config once, call the library, render.

The governed run itself (surface, policy, budget, checker, loop) is built by
:mod:`grapharc.governed`, which the server calls too. Every known failure (bad
config, registry, policy, graph file) is a ``GraphARCError`` reported as one
line and exit 2 before anything executes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from grapharc.cli.output import ExitCode, emit, fail
from grapharc.errors import GraphARCError
from grapharc.governed.provenance import budget_document, provenance
from grapharc.governed.run import (
    configured_trace,
    prepare_graph,
    prepare_plan,
    run_graph,
    run_plan,
)
from grapharc.governed.settings import resolve_config
from grapharc.planner.goal import require_goal
from grapharc.planner.graph_file import read_graph_file
from grapharc.planner.surface import PLUGINS, load_surface
from grapharc.runtime.budget import amount


def _note(doc: dict[str, Any]) -> list[str]:
    """The line saying what the policy does not govern, when there is something to say."""
    return [f"            {doc['policy_note']}"] if doc["policy_note"] else []


def state_line(state: Any) -> str:
    return " ".join(f"{name}={value!r}" for name, value in state)


def plan(goal: str, as_json: bool, flags: dict[str, Any], config_path: Path | None) -> None:
    """``grapharc plan``: run the governed loop and report every round."""
    try:
        require_goal(goal)
        document, code = _plan(goal, flags, config_path)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(document, as_json, render_plan, code)


def _plan(goal: str, flags: dict[str, Any], config_path: Path | None) -> tuple[dict[str, Any], ExitCode]:
    config = resolve_config("plan", flags, config_path=config_path)
    governed = prepare_plan(config)
    with configured_trace(config) as trace:
        result = run_plan(governed, goal, trace=trace)
    surface = governed.surface
    document = {
        "ok": result.stop.value == "goal_met", "goal": goal,
        "model": governed.planner.name if governed.planner else "",
        "registry": surface.spec, "kinds": sorted(surface.registry.kinds()),
        **provenance(governed),
        "stop": {"reason": result.stop.value, "detail": result.detail},
        "max_rounds": config.value("max_rounds"),
        "rounds": [record.as_dict() for record in result.rounds],
        "budget": budget_document(governed.budget), "spent": result.spent,
        "state": result.state.model_dump(mode="json"),
        "state_line": state_line(result.state),
    }
    return document, ExitCode.OK if document["ok"] else ExitCode.NEGATIVE


def render_plan(doc: dict[str, Any]) -> str:
    """The human view of a plan run, in the seed's layout."""
    lines = [f"goal      : {doc['goal']}", f"model     : {doc['model']}",
             f"registry  : {doc['registry']}", f"kinds     : {', '.join(doc['kinds'])}",
             f"policy    : {doc['policy_line']}", *_note(doc), f"config    : {doc['config']['line']}",
             "", f"stopped   : {doc['stop']['reason']}  ({doc['stop']['detail']})",
             f"rounds    : {len(doc['rounds'])} of max {doc['max_rounds']}"]
    for record in doc["rounds"]:
        line = (f"   round {record['round']}: {record['status']}  nodes={record['nodes']} "
                f"executed={record['executed']}")
        if record["rejected"]:
            line += f"  rejected: {', '.join(record['rejected'])}"
        lines.append(line)
    lines += ["", f"state     : {doc['state_line']}"]
    return "\n".join(lines)


def run(graph: Path, check_only: bool, unbounded: bool, as_json: bool, flags: dict[str, Any],
        config_path: Path | None) -> None:
    """``grapharc run``: admit a written topology and, unless --check-only, execute it."""
    try:
        document, code = _run(graph, check_only, unbounded, flags, config_path)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(document, as_json, render_run, code)


def _run(graph: Path, check_only: bool, unbounded: bool, flags: dict[str, Any],
         config_path: Path | None) -> tuple[dict[str, Any], ExitCode]:
    proposal, initial = read_graph_file(graph)
    config = resolve_config("run", flags, config_path=config_path)
    governed = prepare_graph(config)
    if not check_only and not unbounded:
        governed.require_budget(str(graph))
    with configured_trace(config) as trace:
        outcome = run_graph(governed, proposal, initial, graph=str(graph), name=graph.stem,
                            check_only=check_only, trace=trace)
    verdict = outcome.verdict
    document: dict[str, Any] = {
        "ok": verdict.admitted, "graph": str(graph), "registry": governed.surface.spec,
        **provenance(governed), "budget": budget_document(governed.budget),
        "bounded": governed.bounded, "check_only": check_only, "admission": verdict.event(),
        "executed": False, "state": None,
    }
    if outcome.state is None:
        return document, ExitCode.OK if verdict.admitted else ExitCode.NEGATIVE
    document.update(executed=True, state=outcome.state.model_dump(mode="json"),
                    state_line=state_line(outcome.state))
    return document, ExitCode.OK


def render_run(doc: dict[str, Any]) -> str:
    """The human view of a run or a check."""
    admission = doc["admission"]
    set_limits = [f"{k}={v}" for k, v in doc["budget"].items() if v is not None]
    worst = admission["worst_case"]
    lines = [f"graph     : {doc['graph']}", f"registry  : {doc['registry']}",
             f"policy    : {doc['policy_line']}", *_note(doc), f"config    : {doc['config']['line']}",
             f"budget    : {', '.join(set_limits) if doc['bounded'] else 'unbounded'}", "",
             f"admission : {admission['status']}  nodes={admission['nodes']} "
             f"worst_case tokens={worst['tokens']} iterations={worst['iterations']} "
             f"seconds={worst['seconds']}" + _priced(worst['cost_usd'])]
    lines += [f"   {r['code']} at {r['location']}: {r['message']}" for r in admission["rejections"]]
    if doc["executed"]:
        lines += ["", f"state     : {doc['state_line']}"]
    elif doc["check_only"] and admission["status"] == "admitted":
        lines += ["", "check-only: nothing was executed"]
    return "\n".join(lines)


def _priced(cost_usd: float) -> str:
    """The worst case's dollars, shown only when some kind declares a price."""
    return f" cost_usd={amount('cost_usd', cost_usd)}" if cost_usd else ""


def kinds(as_json: bool, registry: str | None) -> None:
    """``grapharc kinds``: every kind a planner may propose, and where it comes from."""
    try:
        surface = load_surface(registry or PLUGINS)
    except GraphARCError as exc:
        fail(exc, as_json)
    rows = [{**spec.describe(), "source": surface.sources.get(spec.name, surface.spec)}
            for spec in surface.registry]
    emit({"ok": True, "registry": surface.spec, "kinds": rows}, as_json, render_kinds)


def render_kinds(doc: dict[str, Any]) -> str:
    width = max((len(row["kind"]) for row in doc["kinds"]), default=4)
    source_width = max((len(row["source"]) for row in doc["kinds"]), default=6)
    return "\n".join(f"{row['kind']:<{width}}  {row['source']:<{source_width}}  "
                     f"{row['description']}".rstrip() for row in doc["kinds"])
