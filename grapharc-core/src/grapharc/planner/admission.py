"""The admission gate: five deterministic checks, all run on every proposal, all failures reported.

1. kinds   - every node's kind is registered, permitted by the node policy, and
             its args validate against the kind's ``args_schema`` (no schema: no args);
             given the build target, every field it writes is in the run's state, and
             no nested scope writes a field that has a reducer;
2. edges   - every edge joins known nodes and is permitted between their *kinds*;
             given the build target, no two nodes that may run in one superstep write
             one field without a reducer (the kernel's own conflict detection);
3. budget  - the summed worst case of every node fits what is left of the budget
             (tokens, iterations, seconds and dollars), and the policy's spend rules,
             judged on what the run has spent plus that worst case, allow it;
4. depth   - the runtime's own nesting plus the proposal's fits the depth limit;
5. acyclic - no scope has a cycle, and every node is reachable from START.

Nothing runs during a check: no factory is called and the budget meter is only
read. Each scope is walked once, so a check is O(N + E) in the proposal's size
(policy decisions are memoised per kind pair). Every ``ask`` (node, edge or
spend) is resolved in one place, ``AdmissionChecker._refusal``, by the one approval model.

The verdict it returns (``AdmissionResult``, with a ``Rejection`` per failure) is
``grapharc.planner.verdict``'s. With a ``BuildTarget`` (the materialiser's), whatever is
admitted can be built and run. Its write-conflict half keeps a bitmask of the supersteps
each node may run in, which adds O(E * N / 64) machine-word operations in the worst case.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from grapharc.decisions.approval import Answer, ApprovalRequest, Approver, request_approval, unanswered_reason
from grapharc.decisions.audit import AuditRecord, PolicyDecision
from grapharc.decisions.decision import Decision
from grapharc.errors import GraphARCError
from grapharc.planner.nesting import current_depth
from grapharc.planner.proposal import END, START, Subgraph, location
from grapharc.planner.registry import CostEstimate, NodeRegistry
from grapharc.planner.rules import EdgePolicy, NodePolicy
from grapharc.planner.verdict import AdmissionResult, AdmissionStatus, Rejection
from grapharc.runtime.budget import BudgetMeter, Remaining, amount

if TYPE_CHECKING:
    from grapharc.planner.build_target import BuildTarget

SpendCheck = Callable[[Mapping[str, float]], PolicyDecision]


class AdmissionSetupError(GraphARCError):
    """An admission checker built on something it cannot vouch for (e.g. an unfrozen registry)."""


class _Walk:
    """One check in progress: the accumulators the five checks fill in a single pass."""

    def __init__(self) -> None:
        self.rejections: list[Rejection] = []
        self.audit: list[AuditRecord] = []
        self.args: dict[str, BaseModel] = {}
        self.tokens = 0
        self.seconds = 0.0
        self.iterations = 0
        self.cost_usd = 0.0
        self.nodes = 0
        self.depth = 0

    def reject(self, check: str, code: str, message: str, where: str, rule_id: str = "") -> None:
        self.rejections.append(Rejection(check, code, message, where, rule_id))

    def worst_case(self) -> dict[str, float]:
        """The summed worst case so far, by budget dimension."""
        return {"tokens": self.tokens, "iterations": self.iterations, "seconds": self.seconds,
                "cost_usd": self.cost_usd}


@dataclass(frozen=True)
class _Wiring:
    """One scope's edges between its own nodes, as the acyclic check walks them."""

    successors: dict[str, list[str]]
    indegree: dict[str, int]
    starts: list[str]


def _listed(names: list[str], limit: int = 10) -> str:
    return ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")


class AdmissionChecker:
    """Admits or rejects proposals against a frozen registry and node/edge policies.

    ``edge_policy`` is required (no policy is not "allow everything");
    ``node_policy`` of None means every registered kind may be proposed.
    ``spend_check`` (e.g. ``PolicyEngine.check_spend``) judges the run's projected
    spend; None means no spend rules. An ``ask`` decision is rejected unless
    ``approver`` (approval routing) says yes. ``target`` (``Materializer.target``)
    is what admitted proposals are built against; with it, a proposal the build
    would refuse is rejected here instead.
    """

    def __init__(self, registry: NodeRegistry, edge_policy: EdgePolicy, *,
                 node_policy: NodePolicy | None = None, max_depth: int = 3,
                 approver: Approver | None = None, spend_check: SpendCheck | None = None,
                 target: BuildTarget | None = None) -> None:
        if not registry.frozen:
            raise AdmissionSetupError("the registry must be frozen before admission",
                                      hint="call registry.freeze() once every kind is added")
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
            raise AdmissionSetupError(f"max_depth must be a positive integer, got {max_depth!r}")
        if target is not None and target.registry is not registry:
            raise AdmissionSetupError("the build target is over another registry than the checker",
                                      hint="pass the target of a Materializer over this registry")
        self.registry = registry
        self.edge_policy = edge_policy
        self.node_policy = node_policy
        self.max_depth = max_depth
        self.approver = approver
        self.spend_check = spend_check
        self.target = target

    def check(self, proposal: Subgraph, *, meter: BudgetMeter | None = None,
              live: Mapping[str, str | None] | None = None) -> AdmissionResult:
        """Run all five checks on ``proposal``.

        ``meter`` is read (never charged) for what the budget has left; without
        one the budget is unlimited. ``live`` maps the names of nodes already in
        the graph the proposal attaches to onto their kinds (None: added without one).
        """
        walk = _Walk()
        scopes: list[tuple[Subgraph, str, str, int]] = [(proposal, "", "", 1)]
        visited: list[tuple[Subgraph, str]] = []  # each scope after the one holding it
        while scopes:  # one pass over each scope's nodes and one over its edges
            scope, prefix, names, level = scopes.pop()
            visited.append((scope, prefix))
            walk.depth = max(walk.depth, level)
            kinds = self._kinds(scope, prefix, names, level, walk, scopes)
            wiring = self._edges(scope, kinds, prefix, walk, live if not prefix else None)
            self._acyclic(kinds, wiring, prefix, walk)
        if self.target is not None:
            self._buildable(self.target, reversed(visited), walk)
        self._budget(walk, meter.remaining() if meter is not None else None)
        self._spend(walk, meter)
        runtime = current_depth()
        if runtime + walk.depth > self.max_depth:
            walk.reject("depth", "too_deep",
                        f"runtime nesting {runtime} + proposal nesting {walk.depth} exceeds "
                        f"the depth limit {self.max_depth}", "proposal")
        worst = CostEstimate(tokens=walk.tokens, seconds=walk.seconds,
                             iterations=walk.iterations, cost_usd=walk.cost_usd)
        status = AdmissionStatus.REJECTED if walk.rejections else AdmissionStatus.ADMITTED
        return AdmissionResult(status, proposal.fingerprint(), tuple(walk.rejections), worst,
                               runtime + walk.depth, walk.nodes,
                               walk.args if not walk.rejections else {}, tuple(walk.audit))

    def _refusal(self, record: AuditRecord, decision: Decision, resource: str) -> tuple[str, str] | None:
        """None when ``decision`` lets the proposal through, else (code, what to add to the message).

        An ``ask`` goes to the one approval model (``grapharc.decisions.approval``): approved passes,
        declined is ``<resource>_approval_declined``, unanswered ``<resource>_approval_required``.
        """
        if decision is Decision.ALLOW:
            return None
        if decision is Decision.DENY:
            return f"{resource}_denied", ""
        answer = request_approval(ApprovalRequest.from_audit(record), self.approver)
        if answer is Answer.APPROVED:
            return None
        if answer is Answer.DECLINED:
            return f"{resource}_approval_declined", " (the approval was declined)"
        return f"{resource}_approval_required", f"; {unanswered_reason()}"

    def _kinds(self, scope: Subgraph, prefix: str, names: str, level: int, walk: _Walk,
               scopes: list[tuple[Subgraph, str, str, int]]) -> dict[str, str]:
        """Check 1 over the scope's nodes; returns each node's policy kind by name."""
        registry, node_policy = self.registry, self.node_policy
        kinds: dict[str, str] = {}
        for index, node in enumerate(scope.nodes):
            walk.nodes += 1
            kinds[node.name] = node.policy_kind
            if node.subgraph is not None:
                scopes.append((node.subgraph, f"{prefix}nodes[{index}].subgraph.",
                               f"{names}{node.name}.", level + 1))
                continue
            if node.kind not in registry:
                walk.reject("kinds", "kind_unknown",
                            f"node {node.name!r} has kind {node.kind!r}, which the registry does "
                            f"not hold (kinds: {', '.join(registry.kinds())})",
                            f"{prefix}nodes[{index}]")
                continue
            spec = registry.get(node.kind)
            worst = spec.worst_case
            walk.tokens += worst.tokens
            walk.seconds += worst.seconds
            walk.iterations += worst.iterations
            walk.cost_usd += worst.cost_usd
            if node_policy is not None:
                decided, record = node_policy.judge(node.kind)
                walk.audit.append(record)
                refused = self._refusal(record, decided.decision, "node")
                if refused is not None:
                    walk.reject("kinds", refused[0], f"node {node.name!r} of kind {node.kind!r}: "
                                f"{decided.reason}{refused[1]}", f"{prefix}nodes[{index}]", decided.rule_id)
            if spec.args_schema is not None or node.args:
                self._args(spec.args_schema, node.args, f"{names}{node.name}",
                           f"{prefix}nodes[{index}]", walk)
        return kinds

    @staticmethod
    def _args(
        schema: type[BaseModel] | None, args: dict[str, Any], key: str, where: str, walk: _Walk
    ) -> None:
        if schema is None:
            walk.reject("kinds", "args_unexpected",
                        f"this kind declares no args_schema, so it takes no args "
                        f"(got {', '.join(sorted(args))})", f"{where}.args")
            return
        try:
            walk.args[key] = schema.model_validate(args)
        except ValidationError as exc:
            for err in exc.errors()[:10]:
                walk.reject("kinds", "args_invalid", err["msg"],
                            f"{where}.args.{location(tuple(err['loc']))}")

    def _edges(self, scope: Subgraph, kinds: dict[str, str], prefix: str, walk: _Walk,
               live: Mapping[str, str | None] | None) -> _Wiring:
        """Check 2 over the scope's edges; returns the wiring check 5 walks."""
        wiring = _Wiring({name: [] for name in kinds}, dict.fromkeys(kinds, 0), [])
        has_out: set[str] = set()
        for index, edge in enumerate(scope.edges):
            source, target = edge.source, edge.target
            if source == END or target == START:
                walk.reject("edges", "edge_invalid",
                            f"edge {source} -> {target} leaves END or enters START",
                            f"{prefix}edges[{index}]")
                continue
            has_out.add(source)
            source_kind = kinds.get(source) or self._endpoint(source, live, prefix, index, walk)
            target_kind = kinds.get(target) or self._endpoint(target, live, prefix, index, walk)
            if source_kind is not None and target_kind is not None:
                self._edge_policy(source_kind, target_kind, prefix, index, walk)
            if target in wiring.indegree:
                if source == START:
                    wiring.starts.append(target)
                elif source in wiring.successors:
                    wiring.successors[source].append(target)
                    wiring.indegree[target] += 1
        if START not in has_out:
            walk.reject("edges", "no_entry", "no edge leaves __start__, so nothing would run",
                        f"{prefix}edges")
        for name, kind in kinds.items():  # implied edges to END are wired, so they are judged too
            if name not in has_out:
                self._edge_policy(kind, END, f"{prefix}{name} -> {END} (implied)", None, walk)
        return wiring

    @staticmethod
    def _endpoint(name: str, live: Mapping[str, str | None] | None, prefix: str, index: int,
                  walk: _Walk) -> str | None:
        """The kind behind an edge end that is not a node of this scope (START, END, or live)."""
        if name in (START, END):
            return name
        if live is not None and name in live:
            kind = live[name]
            if kind is None:
                walk.reject("edges", "edge_unwireable",
                            f"live node {name!r} has no kind, so no policy can judge an edge "
                            "to or from it", f"{prefix}edges[{index}]")
            return kind
        walk.reject("edges", "edge_unknown_node", f"edge names {name!r}, which is no node here",
                    f"{prefix}edges[{index}]")
        return None

    def _edge_policy(self, source: str, target: str, prefix: str, index: int | None,
                     walk: _Walk) -> None:
        decided, record = self.edge_policy.judge(source, target)
        walk.audit.append(record)
        refused = self._refusal(record, decided.decision, "edge")
        if refused is not None:
            where = prefix if index is None else f"{prefix}edges[{index}]"
            walk.reject("edges", refused[0], f"edge {source} -> {target}: {decided.reason}{refused[1]}",
                        where, decided.rule_id)

    @staticmethod
    def _acyclic(kinds: dict[str, str], wiring: _Wiring, prefix: str, walk: _Walk) -> None:
        """Check 5: Kahn's algorithm for cycles, then a walk from START for reachability."""
        indegree = dict(wiring.indegree)
        ready = deque(name for name, count in indegree.items() if count == 0)
        ordered = 0
        while ready:
            ordered += 1
            for target in wiring.successors[ready.popleft()]:
                indegree[target] -= 1
                if indegree[target] == 0:
                    ready.append(target)
        if ordered < len(kinds):
            looped = [name for name, count in indegree.items() if count > 0]
            walk.reject("acyclic", "cycle",
                        f"these nodes are on or behind a cycle: {_listed(looped)}",
                        f"{prefix}edges")
        seen = set(wiring.starts)
        frontier = deque(wiring.starts)
        while frontier:
            for target in wiring.successors[frontier.popleft()]:
                if target not in seen:
                    seen.add(target)
                    frontier.append(target)
        unreachable = [name for name in kinds if name not in seen]
        if unreachable and wiring.starts:
            walk.reject("acyclic", "unreachable_node",
                        f"no path from __start__ reaches: {_listed(unreachable)}", f"{prefix}nodes")

    def _buildable(self, target: BuildTarget, scopes: Iterable[tuple[Subgraph, str]],
                   walk: _Walk) -> None:
        """Checks 1 and 2 against the build target, inner scopes first (a scope writes what its
        nodes write): fields the state lacks, reducer fields under a scope, superstep conflicts."""
        from grapharc.runtime.topology import clashing_writers, superstep_masks

        schema = target.state_schema.__name__
        scope_writes: dict[int, frozenset[str]] = {}
        for scope, prefix in scopes:
            writes: dict[str, frozenset[str]] = {}
            where = {node.name: f"{prefix}nodes[{index}]" for index, node in enumerate(scope.nodes)}
            for node in scope.nodes:
                if node.subgraph is not None:
                    writes[node.name] = scope_writes[id(node.subgraph)]
                    for field in sorted(writes[node.name] & target.reducer_fields):
                        walk.reject("kinds", "scope_writes_reducer_field",
                                    f"scope node {node.name!r} holds nodes writing {field!r}, which "
                                    "has a reducer; a scope returns whole values, so they would be "
                                    "merged twice", where[node.name])
                elif node.kind in self.registry:
                    declared = target.writes_of(node.kind)
                    for field in sorted(declared - target.fields):
                        walk.reject("kinds", "write_unknown_field",
                                    f"node {node.name!r} of kind {node.kind!r} writes {field!r}, "
                                    f"which the run's state {schema} has no field for",
                                    where[node.name])
                    writes[node.name] = declared & target.fields
            scope_writes[id(scope)] = frozenset().union(*writes.values())
            masks = superstep_masks([(edge.source, edge.target) for edge in scope.edges
                                     if (edge.source == START or edge.source in where)
                                     and edge.target in where])
            for first, second, field in clashing_writers(masks or {}, writes,  # None: a cycle (check 5)
                                                         target.reducer_fields):
                walk.reject("edges", "write_conflict",
                            f"nodes {first!r} and {second!r} may run in the same superstep and both "
                            f"write {field!r}, which has no reducer in {schema}", where[second])

    @staticmethod
    def _budget(walk: _Walk, remaining: Remaining | None) -> None:
        """Check 3: the worst case against what the meter has left (an overspent run has 0)."""
        if remaining is None:
            return
        for dimension, need in walk.worst_case().items():
            left = remaining.get(dimension)
            if isinstance(left, int | float) and need > 0 and need > left:
                walk.reject("budget", "over_budget",
                            f"worst case needs {amount(dimension, need)} {dimension}, but only "
                            f"{amount(dimension, left)} are left", "proposal")

    def _spend(self, walk: _Walk, meter: BudgetMeter | None) -> None:
        """Check 3, policy half: the spend rules judge what the run has spent plus the worst case.

        Seconds are judged on the worst case alone: elapsed time is max_seconds' job, and
        admission stays deterministic.
        """
        if self.spend_check is None:
            return
        projected = walk.worst_case()
        if meter is not None:
            projected["tokens"] += meter.tokens
            projected["iterations"] += meter.iterations
            projected["cost_usd"] += meter.cost_usd
        decided = self.spend_check(projected)
        walk.audit.append(decided.record)
        refused = self._refusal(decided.record, decided.decision, "spend")
        if refused is not None:
            walk.reject("budget", refused[0], f"spend rule {decided.record.rule_id!r}: "
                        f"{decided.record.reason}{refused[1]}", "proposal", decided.record.rule_id)
