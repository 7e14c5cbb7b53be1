"""What ``plan``, ``run`` and ``kinds`` do: resolve config, surface and policy, then gate.

Every known failure (bad config, registry, policy, graph file) is a
``GraphARCError`` reported as one line and exit 2 before anything executes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc._files import read_user_text
from grapharc.cli.output import ExitCode, emit, fail
from grapharc.config import Config, load_config
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.planner.registry import UnknownKindError
from grapharc.planner.surface import DEMO, PLUGINS, Surface, load_surface
from grapharc.policy.engine import PolicyDocumentError, PolicyEngine
from grapharc.policy.sources import LoadedPolicy, PolicyContext, resolve_policy
from grapharc.runtime.budget import Budget

MAX_GRAPH_BYTES = 16 * 1024 * 1024
PLAN_DEFAULTS: dict[str, Any] = {"registry": DEMO, "max_tokens": 500_000, "max_iterations": 1_000}
CANNOT_RUN_CODES = frozenset({"kind_unknown"})


@dataclass(frozen=True)
class Setup:
    """Everything a governed command resolved before it may check anything."""

    config: Config
    surface: Surface
    loaded: LoadedPolicy
    engine: PolicyEngine
    tenant: str | None


def _policy_context(config: Config, surface: Surface, model: Any, model_name: str) -> PolicyContext:
    layer = config.source("policy")
    path = config.value("policy")
    return PolicyContext(
        flag=path if layer == "flag" else None, env=path if layer == "env" else None,
        config_path=config.path if layer == "file" else None,
        config={"policy": config.table["policy"]} if layer == "file" else {},
        registry_default=surface.default_policy, registry_name=surface.spec,
        model=model, model_name=model_name, workdir=Path.cwd(),
        catalog=tuple(surface.registry.catalog()))


def setup(flags: dict[str, Any], config_path: Path | None, defaults: dict[str, Any],
          model: Any = None, model_name: str = "") -> Setup:
    """Resolve config, load the surface and the policy; refuse a policy naming unknown kinds."""
    config = load_config(flags, config=config_path, defaults=defaults)
    surface = load_surface(config.value("registry"))
    loaded = resolve_policy(_policy_context(config, surface, model, model_name))
    if loaded is None:
        raise PolicyDocumentError(f"no policy for registry {surface.spec!r}",
                                  hint="pass --policy PATH or set policy in grapharc.toml")
    engine = PolicyEngine.from_loaded(loaded)
    unknown = engine.unknown_kinds(surface.registry.kinds())
    if unknown:
        raise PolicyDocumentError(f"policy {loaded.origin}: " + "; ".join(unknown),
                                  hint="fix the kind name, or use a glob if that is meant")
    return Setup(config, surface, loaded, engine, config.value("tenant"))


def budget_from(config: Config, engine: PolicyEngine, tenant: str | None) -> Budget:
    """The configured budget, tightened by the policy's spend ceilings."""
    ceilings = engine.spend_ceilings(tenant)

    def tighter(name: str, ceiling: float | None) -> Any:
        value = config.value(name)
        if ceiling is None:
            return value
        ceiling = int(ceiling) if name != "max_seconds" else ceiling
        return ceiling if value is None else min(value, ceiling)

    return Budget(max_tokens=tighter("max_tokens", ceilings.get("tokens")),
                  max_iterations=tighter("max_iterations", ceilings.get("iterations")),
                  max_seconds=tighter("max_seconds", ceilings.get("seconds")),
                  max_concurrency=config.value("max_concurrency"))


def policy_line(loaded: LoadedPolicy, engine: PolicyEngine) -> str:
    """``origin [default] (summary)  [source]``: the provenance is always on the line."""
    default = " default" if loaded.source == "registry-default" else ""
    return f"{loaded.origin}{default} ({engine.summary()})  [{loaded.source}]"


def policy_document(loaded: LoadedPolicy, engine: PolicyEngine) -> dict[str, Any]:
    return {"source": loaded.source, "origin": loaded.origin, "version": engine.version,
            "digest": engine.digest, "description": engine.description,
            "generated_now": loaded.generated_now}


def state_line(state: Any) -> str:
    return " ".join(f"{name}={value!r}" for name, value in state)


def _open_trace(config: Config) -> Any:
    path = config.value("trace")
    if path is None:
        return None
    from grapharc.runtime.trace import TraceWriter

    return TraceWriter(path)


class EmptyGoalError(GraphARCError):
    """``grapharc plan`` was given a goal with nothing in it."""

    hint = 'say what the run is for, as in: grapharc plan "investigate the checkout outage"'


def plan(goal: str, as_json: bool, flags: dict[str, Any], config_path: Path | None) -> None:
    """``grapharc plan``: run the governed loop and report every round."""
    try:
        if not goal.strip():
            raise EmptyGoalError("the goal is empty; a planner needs something to plan for")
        document, code = _plan(goal, flags, config_path)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(document, as_json, render_plan, code)


def _planner_model(flags: dict[str, Any], config_path: Path | None) -> tuple[Any, str, bool]:
    """The planner model and its label; ``True`` when a real spec was named (may generate policy)."""
    from grapharc.models import get_model

    config = load_config(flags, config=config_path, defaults=PLAN_DEFAULTS)
    spec = config.value("model")
    if spec is not None:
        return get_model(spec), spec, True
    surface = load_surface(config.value("registry"))
    if surface.scripted_planner is None:
        raise ConfigurationError(f"registry {surface.spec!r} ships no scripted planner",
                                 hint="name a planner model with --model backend/model")
    return surface.scripted_planner(), "scripted", False


def _plan(goal: str, flags: dict[str, Any], config_path: Path | None) -> tuple[dict[str, Any], ExitCode]:
    from grapharc.planner import AdmissionChecker, GovernedLoop, LoopLimits, Materializer, PlannerNode

    model, model_name, named = _planner_model(flags, config_path)
    ready = setup(flags, config_path, PLAN_DEFAULTS, model if named else None, model_name)
    config, surface = ready.config, ready.surface
    if surface.state_schema is None:
        raise ConfigurationError(f"registry {surface.spec!r} declares no STATE_SCHEMA",
                                 hint="declare STATE_SCHEMA (a Pydantic model) beside the registry")
    trace = _open_trace(config)
    try:
        loop = GovernedLoop(
            planner=PlannerNode(model, catalog=surface.registry.catalog()),
            checker=AdmissionChecker(surface.registry, ready.engine.edge_policy(ready.tenant),
                                     node_policy=ready.engine.node_policy(ready.tenant),
                                     max_depth=config.value("max_depth")),
            materializer=Materializer(surface.registry, surface.state_schema, surface.writes,
                                      trace=trace, name="plan"),
            budget=budget_from(config, ready.engine, ready.tenant),
            limits=LoopLimits(max_rounds=config.value("max_rounds")),
            goal_reached=surface.goal_reached or (lambda state: False))
        fields = surface.state_schema.model_fields
        result = loop.run(goal, surface.state_schema(**({"goal": goal} if "goal" in fields else {})))
    finally:
        if trace is not None:
            trace.close()
    document = {
        "ok": result.stop.value == "goal_met", "goal": goal, "model": model_name,
        "registry": surface.spec, "kinds": sorted(surface.registry.kinds()),
        "policy": policy_document(ready.loaded, ready.engine),
        "policy_line": policy_line(ready.loaded, ready.engine),
        "policy_source": ready.loaded.source,
        "config": {"path": str(config.path) if config.path else None, "line": config.line()},
        "sources": config.sources(),
        "stop": {"reason": result.stop.value, "detail": result.detail},
        "max_rounds": config.value("max_rounds"),
        "rounds": [record.as_dict() for record in result.rounds],
        "budget": budget_document(loop.budget), "spent": result.spent,
        "state": result.state.model_dump(mode="json"),
        "state_line": state_line(result.state),
    }
    return document, ExitCode.OK if document["ok"] else ExitCode.NEGATIVE


def render_plan(doc: dict[str, Any]) -> str:
    """The human view of a plan run, in the seed's layout."""
    lines = [f"goal      : {doc['goal']}", f"model     : {doc['model']}",
             f"registry  : {doc['registry']}", f"kinds     : {', '.join(doc['kinds'])}",
             f"policy    : {doc['policy_line']}", f"config    : {doc['config']['line']}", "",
             f"stopped   : {doc['stop']['reason']}  ({doc['stop']['detail']})",
             f"rounds    : {len(doc['rounds'])} of max {doc['max_rounds']}"]
    for record in doc["rounds"]:
        line = (f"   round {record['round']}: {record['status']}  nodes={record['nodes']} "
                f"executed={record['executed']}")
        if record["rejected"]:
            line += f"  rejected: {', '.join(record['rejected'])}"
        lines.append(line)
    lines += ["", f"state     : {doc['state_line']}"]
    return "\n".join(lines)


def read_graph_file(path: Path) -> tuple[Any, dict[str, Any]]:
    """A graph file's proposal and its optional ``input`` state; bad files say what and where."""
    from grapharc.planner.proposal import ProposalError, decode_json, proposal_from_data

    text = read_user_text(path, what="graph file", limit=MAX_GRAPH_BYTES, error=ProposalError,
                          kind="JSON")
    data = decode_json(text, str(path))
    initial: dict[str, Any] = {}
    if isinstance(data, dict) and "input" in data:
        data = dict(data)
        initial = data.pop("input")
        if not isinstance(initial, dict):
            raise ProposalError(f"{path}: input must be an object of state values")
    return proposal_from_data(data, str(path)), initial


def run(graph: Path, check_only: bool, unbounded: bool, as_json: bool, flags: dict[str, Any],
        config_path: Path | None) -> None:
    """``grapharc run``: admit a written topology and, unless --check-only, execute it."""
    try:
        document, code = _run(graph, check_only, unbounded, flags, config_path)
    except GraphARCError as exc:
        fail(exc, as_json)
    emit(document, as_json, render_run, code)


class UnboundedRunError(GraphARCError):
    """A run with no token, iteration or seconds budget, without --unbounded."""

    hint = "set --max-tokens, --max-iterations or --max-seconds (or pass --unbounded)"


def _run(graph: Path, check_only: bool, unbounded: bool, flags: dict[str, Any],
         config_path: Path | None) -> tuple[dict[str, Any], ExitCode]:
    from uuid import uuid4

    from grapharc.planner import AdmissionChecker, Materializer
    from grapharc.planner import events as governance_events
    from grapharc.runtime.budget import BudgetMeter

    proposal, initial = read_graph_file(graph)
    ready = setup(flags, config_path, {"registry": PLUGINS})
    config, surface = ready.config, ready.surface
    budget = budget_from(config, ready.engine, ready.tenant)
    bounded = any(v is not None for v in (budget.max_tokens, budget.max_iterations,
                                          budget.max_seconds))
    if not bounded and not check_only and not unbounded:
        raise UnboundedRunError(f"refusing to run {graph}: no budget is set, so every dimension "
                                "would be unlimited and any worst case would be admitted")
    checker = AdmissionChecker(surface.registry, ready.engine.edge_policy(ready.tenant),
                               node_policy=ready.engine.node_policy(ready.tenant),
                               max_depth=config.value("max_depth"))
    trace = _open_trace(config)
    try:
        verdict = checker.check(proposal, meter=BudgetMeter(budget))
        governance_events.emit(trace, "decision", str(uuid4()), source=str(graph),
                               **verdict.event())
        document: dict[str, Any] = {
            "ok": verdict.admitted, "graph": str(graph), "registry": surface.spec,
            "policy": policy_document(ready.loaded, ready.engine),
            "policy_line": policy_line(ready.loaded, ready.engine),
            "policy_source": ready.loaded.source,
            "config": {"path": str(config.path) if config.path else None, "line": config.line()},
            "sources": config.sources(), "budget": budget_document(budget),
            "bounded": bounded, "check_only": check_only, "admission": verdict.event(),
            "executed": False, "state": None,
        }
        missing = [r for r in verdict.rejections if r.code in CANNOT_RUN_CODES]
        if missing:  # a graph naming kinds that do not exist could not run at all
            raise UnknownKindError("; ".join(f"{graph}: {r.location}: {r.message}"
                                             for r in missing),
                                   hint="see grapharc kinds for the kinds this registry holds")
        if not verdict.admitted or check_only:
            return document, ExitCode.OK if verdict.admitted else ExitCode.NEGATIVE
        if surface.state_schema is None:
            raise ConfigurationError(f"registry {surface.spec!r} declares no STATE_SCHEMA")
        compiled = Materializer(surface.registry, surface.state_schema, surface.writes,
                                trace=trace, name=graph.stem).materialize(verdict, proposal,
                                                                           budget=budget)
        out = compiled.invoke(surface.state_schema(**initial))
    finally:
        if trace is not None:
            trace.close()
    state = surface.state_schema.model_validate(out)
    document.update(executed=True, state=state.model_dump(mode="json"), state_line=state_line(state))
    return document, ExitCode.OK


def budget_document(budget: Budget) -> dict[str, Any]:
    return {"max_tokens": budget.max_tokens, "max_iterations": budget.max_iterations,
            "max_seconds": budget.max_seconds, "max_concurrency": budget.max_concurrency}


def render_run(doc: dict[str, Any]) -> str:
    """The human view of a run or a check."""
    admission = doc["admission"]
    set_limits = [f"{k}={v}" for k, v in doc["budget"].items() if v is not None]
    worst = admission["worst_case"]
    lines = [f"graph     : {doc['graph']}", f"registry  : {doc['registry']}",
             f"policy    : {doc['policy_line']}", f"config    : {doc['config']['line']}",
             f"budget    : {', '.join(set_limits) if doc['bounded'] else 'unbounded'}", "",
             f"admission : {admission['status']}  nodes={admission['nodes']} "
             f"worst_case tokens={worst['tokens']} iterations={worst['iterations']} "
             f"seconds={worst['seconds']}"]
    lines += [f"   {r['code']} at {r['location']}: {r['message']}" for r in admission["rejections"]]
    if doc["executed"]:
        lines += ["", f"state     : {doc['state_line']}"]
    elif doc["check_only"] and admission["status"] == "admitted":
        lines += ["", "check-only: nothing was executed"]
    return "\n".join(lines)


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
