"""One governed run, built from resolved configuration: surface, model, policy, budget, checker.

``grapharc plan``, ``grapharc run`` and the HTTP server are thin callers of this module. They
resolve a :class:`~grapharc.config.Config` once (:func:`resolve_config`: flag > env >
grapharc.toml > the command's built-ins, decided in :mod:`grapharc.config` and nowhere else),
and everything after follows from it: the registry surface, the planner model, the policy (the
file the ``policy`` setting names, else a generated one, else the registry's default), the
budget (the settings tightened by the policy's deny spend ceilings) and an admission checker
that applies the node, edge and spend rules. Preparing does every fallible look-up and writes
nothing, so a caller opens its trace only once the run can start.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from pydantic import BaseModel

from grapharc.config.settings import Config
from grapharc.decisions.approval import Approver
from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.planner.admission import AdmissionChecker
from grapharc.planner.build_target import BuildTarget
from grapharc.planner.goal import require_goal
from grapharc.planner.proposal import Subgraph
from grapharc.planner.surface import Surface, load_surface
from grapharc.planner.verdict import AdmissionResult
from grapharc.policy.engine import PolicyDocumentError, PolicyEngine
from grapharc.policy.files import LoadedPolicy
from grapharc.policy.schema import ToolRuleDoc
from grapharc.policy.sources import PolicyContext, resolve_policy
from grapharc.runtime.budget import Budget, BudgetMeter

if TYPE_CHECKING:
    from grapharc.planner.loop import GovernedLoop
    from grapharc.planner.materialize import Materializer
    from grapharc.planner.rounds import LoopResult
    from grapharc.trace.writer import TraceWriter

class UnboundedRunError(GraphARCError):
    """A run with no token, iteration, seconds or dollar budget that was not allowed to be one."""

    hint = ("set --max-tokens, --max-iterations, --max-seconds or --max-cost-usd "
            "(or pass --unbounded)")


@dataclass(frozen=True)
class Planner:
    """The model that proposes; ``spec`` is None for the surface's free scripted planner."""

    model: Any
    spec: str | None

    @property
    def name(self) -> str:
        return self.spec or "scripted"


@dataclass(frozen=True)
class GovernedRun:
    """Everything one governed run resolved from its configuration, before anything is checked."""

    config: Config
    surface: Surface
    policy: LoadedPolicy
    engine: PolicyEngine
    budget: Budget
    planner: Planner | None = None

    @property
    def tenant(self) -> str | None:
        tenant: str | None = self.config.value("tenant")
        return tenant

    @property
    def bounded(self) -> bool:
        """Whether any consumable dimension has a ceiling; unbounded, every worst case fits."""
        budget = self.budget
        return any(limit is not None for limit in (budget.max_tokens, budget.max_iterations,
                                                   budget.max_seconds, budget.max_cost_usd))

    def require_budget(self, graph: str) -> None:
        """Refuse to execute ``graph`` when no dimension has a ceiling."""
        if not self.bounded:
            raise UnboundedRunError(f"refusing to run {graph}: no budget is set, so every dimension "
                                    "would be unlimited and any worst case would be admitted")

    def checker(self, approver: Approver | None = None) -> AdmissionChecker:
        """The admission gate: this registry, the policy's node, edge and spend rules, the depth
        limit, and the build target, so whatever it admits can be built and run."""
        engine, tenant = self.engine, self.tenant
        return AdmissionChecker(
            self.surface.registry, engine.edge_policy(tenant), node_policy=engine.node_policy(tenant),
            max_depth=self.config.value("max_depth"), approver=approver,
            spend_check=functools.partial(engine.check_spend, tenant=tenant, subject="proposal"),
            target=BuildTarget.of(self.surface.registry, self.state_schema(), self.surface.writes))

    def materializer(self, name: str, trace: TraceWriter | None) -> Materializer:
        """Builds admitted proposals over this surface's registry, state and writes."""
        from grapharc.planner.materialize import Materializer

        return Materializer(self.surface.registry, self.state_schema(), self.surface.writes,
                            trace=trace, name=name)

    def state_schema(self) -> type[BaseModel]:
        """The state the surface's kinds read and write; a run cannot start without one."""
        schema = self.surface.state_schema
        if schema is None:
            raise ConfigurationError(f"registry {self.surface.spec!r} declares no STATE_SCHEMA",
                                     hint="declare STATE_SCHEMA (a Pydantic model) beside the registry")
        return schema


def configured_budget(config: Config) -> Budget:
    """The budget the settings name (every ``Budget`` field is a setting of the same name)."""
    return Budget(**{field.name: config.value(field.name) for field in dataclasses.fields(Budget)})


def budget_for(config: Config, engine: PolicyEngine) -> Budget:
    """The configured budget, each dimension tightened by the policy's deny spend ceiling."""
    budget = configured_budget(config)
    tightened: dict[str, Any] = {}  # counts for tokens and iterations, floats for the rest
    for dimension, ceiling in engine.spend_ceilings(config.value("tenant")).items():
        name = f"max_{dimension}"
        limit = int(ceiling) if dimension in ("tokens", "iterations") else ceiling
        value = getattr(budget, name)
        tightened[name] = limit if value is None else min(value, limit)
    return dataclasses.replace(budget, **tightened)


def _govern(config: Config, surface: Surface, planner: Planner | None) -> GovernedRun:
    """Resolve the policy for ``surface`` and refuse one with rules nothing here would enforce."""
    drafter = planner if planner is not None and planner.spec is not None else None
    loaded = resolve_policy(PolicyContext(
        configured=config.setting("policy"), registry_default=surface.default_policy,
        registry_name=surface.spec, model=drafter.model if drafter else None,
        model_name=drafter.name if drafter else "", workdir=Path.cwd(),
        catalog=tuple(surface.registry.catalog())))
    if loaded is None:
        raise PolicyDocumentError(f"no policy for registry {surface.spec!r}",
                                  hint="pass --policy PATH or set policy in grapharc.toml")
    engine = PolicyEngine.from_loaded(loaded)
    if not any(engine.governs(resource) for resource in ("node", "edge", "spend")):
        raise PolicyDocumentError(f"policy {loaded.origin} has no node, edge or spend rules, so it "
                                  "would govern nothing in this run",
                                  hint="add the rules this run should follow, e.g. an edge rule")
    unknown = engine.unknown_kinds(surface.registry.kinds())
    if unknown:
        raise PolicyDocumentError(f"policy {loaded.origin}: " + "; ".join(unknown),
                                  hint="fix the kind name, or use a glob if that is meant")
    tools = [rule.id for rule in engine.document.rules if isinstance(rule, ToolRuleDoc)]
    if tools:
        raise PolicyDocumentError(
            f"policy {loaded.origin}: rule(s) {', '.join(map(repr, tools))} have resource = \"tool\", "
            "and a governed run gates no tool calls, so nothing would enforce them",
            hint="remove the tool rules from this policy, or keep them in the agent's policy")
    return GovernedRun(config, surface, loaded, engine, budget_for(config, engine), planner)


def prepare_plan(config: Config) -> GovernedRun:
    """What a governed loop needs: the planner model, surface, policy, budget and state schema."""
    from grapharc.models import get_model

    spec = config.value("model")
    named = get_model(spec) if spec is not None else None  # a bad spec is reported first
    surface = load_surface(config.value("registry"))
    if named is not None:
        model = named
    elif surface.scripted_planner is not None:
        model = surface.scripted_planner()
    else:
        raise ConfigurationError(f"registry {surface.spec!r} ships no scripted planner",
                                 hint="name a planner model with --model backend/model")
    planner = Planner(model, spec)
    governed = _govern(config, surface, planner)
    governed.state_schema()
    return governed


def prepare_graph(config: Config) -> GovernedRun:
    """What admitting (and running) a written graph needs: the surface, policy and budget."""
    return _govern(config, load_surface(config.value("registry")), None)


def governed_loop(governed: GovernedRun, *, trace: TraceWriter | None = None,
                  approver: Approver | None = None) -> GovernedLoop:
    """The governed loop of a prepared plan: its planner, checker, materialiser, budget and limits."""
    from grapharc.planner.loop import GovernedLoop, LoopLimits
    from grapharc.planner.planner_node import PlannerNode

    if governed.planner is None:
        raise ConfigurationError("this governed run was prepared without a planner",
                                 hint="prepare it with prepare_plan(config)")
    surface = governed.surface
    return GovernedLoop(
        planner=PlannerNode(governed.planner.model, catalog=surface.registry.catalog()),
        checker=governed.checker(approver), materializer=governed.materializer("plan", trace),
        budget=governed.budget, limits=LoopLimits(max_rounds=governed.config.value("max_rounds")),
        goal_reached=surface.goal_reached or (lambda state: False))


def run_plan(governed: GovernedRun, goal: str, *, trace: TraceWriter | None = None,
             approver: Approver | None = None) -> LoopResult:
    """Run the governed loop for ``goal``: propose, admit, execute, replan, until a stated stop."""
    loop = governed_loop(governed, trace=trace, approver=approver)
    require_goal(goal)
    schema = governed.state_schema()
    return loop.run(goal, schema(**({"goal": goal} if "goal" in schema.model_fields else {})))


@dataclass(frozen=True)
class GraphOutcome:
    """A written graph's admission verdict and, when it was executed, its final state."""

    verdict: AdmissionResult
    state: BaseModel | None = None

    @property
    def executed(self) -> bool:
        return self.state is not None


def run_graph(governed: GovernedRun, proposal: Subgraph, initial: Mapping[str, Any], *, graph: str,
              name: str, check_only: bool = False, trace: TraceWriter | None = None,
              approver: Approver | None = None) -> GraphOutcome:
    """Admit a written ``proposal`` (traced as ``graph``) and, unless ``check_only``, execute it.

    Every check runs and every failure is in the verdict, an unknown kind among them.
    ``initial`` is checked against the state first (names and types), so a check-only run
    refuses input the real run would refuse.
    """
    from grapharc.planner import events
    from grapharc.runtime.state import StateContract

    schema = governed.state_schema()
    start = StateContract(schema, {}).initial_state(f"{graph} input", initial)
    verdict = governed.checker(approver).check(proposal, meter=BudgetMeter(governed.budget))
    run_id = str(uuid4())  # the decision and the run it admits are one run on the trace
    events.emit(trace, "decision", run_id, source=graph, **verdict.event())
    if not verdict.admitted or check_only:
        return GraphOutcome(verdict)
    compiled = governed.materializer(name, trace).materialize(verdict, proposal,
                                                              budget=governed.budget)
    config = {"run_id": run_id, "configurable": {"thread_id": run_id}}
    return GraphOutcome(verdict, schema.model_validate(compiled.invoke(start, config)))


@contextmanager
def configured_trace(config: Config) -> Iterator[TraceWriter | None]:
    """The trace writer the ``trace`` setting names (None when unset), closed on the way out."""
    path = config.value("trace")
    if path is None:
        yield None
        return
    from grapharc.trace.writer import TraceWriter

    trace = TraceWriter(path)
    try:
        yield trace
    finally:
        trace.close()
