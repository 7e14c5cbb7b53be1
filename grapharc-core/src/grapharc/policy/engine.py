"""The policy engine: one validated document, compiled for admission and the tool harness.

Evaluation is tiered in every half: every deny before every ask before every
allow, and unmatched is deny — so a broad deny beats a narrow allow, including
one scoped to a single tenant. Rules without ``tenant`` apply to everyone; a
rule with one applies only when evaluating for that tenant, compared case-insensitively
(``grapharc.config.tenants``: a deny for ``acme`` holds for ``ACME``). Every decision
carries an ``AuditRecord`` naming the rule id, reason, policy version and the
document's digest.

A document governs nodes (or edges) only if it has a node (or edge) rule, for
any tenant. One with edge rules alone, like the seed's "deny -> deploy,
otherwise allow", leaves every registered kind proposable rather than denying
them all; :meth:`PolicyEngine.scope_note` says so in one line, and the decisions
it lets through carry that reason in their audit records.

Precedence with CLI flags (``--allow/--ask/--deny``): flags add rules to the
same tiers, so a document deny beats a flag allow, and a flag deny beats a
document allow. A flag can narrow a document; it can never widen it.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from grapharc.config.tenants import tenant_or_none
from grapharc.decisions.approval import Answer, ApprovalRequest, Approver, request_approval
from grapharc.decisions.audit import AuditRecord, PolicyDecision
from grapharc.decisions.decision import Decision
from grapharc.decisions.tool_rules import PermissionPolicy, PermissionRule
from grapharc.errors import GraphARCError
from grapharc.planner.proposal import location
from grapharc.planner.rules import EdgePolicy, EdgeRule, NodePolicy, NodeRule
from grapharc.policy.files import LoadedPolicy, document_digest, load_policy_file
from grapharc.policy.schema import (
    EdgeRuleDoc,
    NodeRuleDoc,
    PolicyDocument,
    SpendRuleDoc,
    ToolRuleDoc,
    repeated_ids,
)

UNGOVERNED_REASONS = {
    "node": "the policy has no node rules, so it does not govern which kinds may be proposed",
    "edge": "the policy has no edge rules, so it does not govern how kinds are wired",
}


class PolicyDocumentError(GraphARCError):
    """A policy document that does not fit the schema; names the file and the rule."""

    hint = "the keys, resources and rules of a policy document are in docs/reference/policy.md"


@dataclass(frozen=True)
class Problem:
    """One way a document misses the schema: where (``rules[0].action``), what is wrong, and the
    index and id of the rule it is in (if it is in one, and that rule has an id)."""

    where: str
    message: str
    rule_index: int | None = None
    rule_id: str | None = None

    def __str__(self) -> str:
        rule = f" (rule {self.rule_id!r})" if self.rule_id is not None else ""
        return f"{self.where}{rule}: {self.message}"


def validate_document(document: Mapping[str, Any], origin: str) -> PolicyDocument:
    """Check a decoded document against the schema; every problem names its location."""
    checked, problems = check_document(document)
    if checked is None:
        raise PolicyDocumentError(f"policy {origin}: " + "; ".join(map(str, problems[:10])))
    return checked


def check_document(document: Mapping[str, Any]) -> tuple[PolicyDocument | None, list[Problem]]:
    """The document as validated (None if it is not valid) and every problem with its location.
    The tables of installed tool sources (``[mcp]`` with grapharc-mcp) are theirs to check, not
    the rules'."""
    from grapharc.config.settings import tool_source_names

    if isinstance(document, Mapping):
        sources = tool_source_names()
        document = {key: value for key, value in document.items() if key not in sources}
    try:
        return PolicyDocument.model_validate(document), []
    except ValidationError as exc:
        rules = document.get("rules") if isinstance(document, Mapping) else None
        problems = [_problem(err, rules) for err in exc.errors()]
        if isinstance(rules, list) and not any(p.message.endswith("is used twice") for p in problems):
            ids = [rule.get("id") if isinstance(rule, dict) else None for rule in rules]
            named = [rule_id if isinstance(rule_id, str) else None for rule_id in ids]  # a list is no key
            problems += [Problem(f"rules[{index}].id", f"rule id {rule_id!r} is used twice", index, rule_id)
                         for index, rule_id in repeated_ids(named) if rule_id is not None]
        return None, problems


def _problem(err: Any, rules: Any) -> Problem:
    """A Pydantic error as a ``Problem``, naming the rule by its id where the rule has one."""
    loc = tuple(err["loc"])
    where = location(tuple(part for part in loc if not str(part).endswith("RuleDoc")
                           and part not in {"node", "edge", "tool", "spend"}))
    index = loc[1] if len(loc) > 1 and loc[0] == "rules" and isinstance(loc[1], int) else None
    rule = rules[index] if index is not None and isinstance(rules, list) and index < len(rules) else None
    rule_id = str(rule["id"]) if isinstance(rule, dict) and "id" in rule else None
    return Problem(where, str(err["msg"]), index, rule_id)


AUDIT_LOG_SIZE = 10_000
"""Engine-level decisions ``PolicyEngine.audit_log`` keeps, newest last: an engine lives as long as
its server, which decides without end, so the log keeps the newest only (each decision that
governs a run is also on that run's trace)."""
TOOL_DECISIONS_KEPT = 1024
"""Tool decisions an engine remembers (by tool, tenant and flag rules), so deciding the same call
again costs a lookup; bounded, since a model may name any number of tools."""


class PolicyEngine:
    """Evaluates one policy document; ``audit_log`` keeps the newest ``AUDIT_LOG_SIZE`` engine-level
    decisions."""

    def __init__(self, document: Mapping[str, Any], *, digest: str | None = None,
                 origin: str = "<document>", source: str = "") -> None:
        self.document = validate_document(document, origin)
        self.digest = digest or document_digest(document)
        self.origin = origin
        self.source = source
        self.audit_log: deque[AuditRecord] = deque(maxlen=AUDIT_LOG_SIZE)
        self._tool_rules: dict[str | None, PermissionPolicy] = {}
        self._tool_decisions = functools.lru_cache(maxsize=TOOL_DECISIONS_KEPT)(self._decide_tool)

    @classmethod
    def from_loaded(cls, loaded: LoadedPolicy) -> PolicyEngine:
        return cls(loaded.document, digest=loaded.digest, origin=loaded.origin,
                   source=loaded.source)

    @classmethod
    def from_file(cls, path: Path) -> PolicyEngine:
        return cls.from_loaded(load_policy_file(Path(path), "file"))

    @property
    def version(self) -> str:
        return self.document.version

    @property
    def description(self) -> str:
        return self.document.description

    def _rules(self, kind: type, tenant: str | None) -> list[Any]:
        """The rules of ``kind`` for everyone and for ``tenant`` (rules keep theirs case-folded)."""
        folded = tenant_or_none(tenant)
        return [rule for rule in self.document.rules
                if isinstance(rule, kind) and rule.tenant in (None, folded)]

    def record(self, resource: str, subject: str, decision: Decision, rule_id: str, reason: str,
                tenant: str | None) -> AuditRecord:
        """Append one decision to the audit log and return its record."""
        record = self._audit_record(resource, subject, decision, rule_id, reason, tenant)
        self.audit_log.append(record)
        return record

    def _audit_record(self, resource: str, subject: str, decision: Decision, rule_id: str, reason: str,
                      tenant: str | None) -> AuditRecord:
        return AuditRecord(resource, subject, decision.value, rule_id, reason, self.version,
                           self.digest, tenant_or_none(tenant))

    def governs(self, resource: str) -> bool:
        """Whether the document has any rule for ``resource`` (node, edge, tool or spend)."""
        return any(rule.resource == resource for rule in self.document.rules)

    def ungoverned(self) -> list[str]:
        """What admission consults that this document does not govern, one reason each."""
        return [reason for resource, reason in UNGOVERNED_REASONS.items() if not self.governs(resource)]

    def scope_note(self) -> str:
        """One line naming what admission consults that this document does not govern, or ""."""
        return "; ".join(self.ungoverned())

    def node_policy(self, tenant: str | None = None) -> NodePolicy:
        """The node rules admission consults (for ``tenant``, plus every unscoped rule).

        A document without node rules does not govern nodes: every kind is allowed.
        """
        rules = tuple(NodeRule(Decision(r.action), r.kind, r.id, r.reason)
                      for r in self._rules(NodeRuleDoc, tenant)) if self.governs("node") \
            else (NodeRule(Decision.ALLOW, reason=UNGOVERNED_REASONS["node"]),)
        return NodePolicy(version=self.version, digest=self.digest, tenant=tenant_or_none(tenant),
                          rules=rules)

    def edge_policy(self, tenant: str | None = None) -> EdgePolicy:
        """The edge rules admission consults (for ``tenant``, plus every unscoped rule).

        A document without edge rules does not govern edges: every edge is allowed.
        """
        rules = tuple(EdgeRule(Decision(r.action), r.source, r.target, r.id, r.reason)
                      for r in self._rules(EdgeRuleDoc, tenant)) if self.governs("edge") \
            else (EdgeRule(Decision.ALLOW, reason=UNGOVERNED_REASONS["edge"]),)
        return EdgePolicy(version=self.version, digest=self.digest, tenant=tenant_or_none(tenant),
                          rules=rules)

    def permission_policy(self, tenant: str | None = None,
                          flags: PermissionPolicy | None = None) -> PermissionPolicy:
        """The document's tool rules merged with flag rules; tiers decide, so a document deny wins.

        The document's own rules are built once per tenant (the document never changes): an agent
        asks for them at every tool call."""
        folded = tenant_or_none(tenant)
        document = self._tool_rules.get(folded)
        if document is None:
            document = self._tool_rules[folded] = PermissionPolicy(
                PermissionRule(r.tool, Decision(r.action), r.id, r.reason, r.route, "document")
                for r in self._rules(ToolRuleDoc, folded))
        return document.merged(flags) if flags is not None else document

    def check_tool(self, tool: str, *, tenant: str | None = None,
                   flags: PermissionPolicy | None = None) -> PolicyDecision:
        """Decide one tool call (audited); an unmatched tool is denied. The document and the flag
        rules never change, so a tool's decision (and its record) is worked out once per tenant and
        flags and appended to the audit log at every call."""
        decided = self._tool_decisions(tool, tenant, flags)
        self.audit_log.append(decided.record)
        return decided

    def _decide_tool(self, tool: str, tenant: str | None, flags: PermissionPolicy | None) -> PolicyDecision:
        decided = self.permission_policy(tenant, flags).decide(tool)
        rule = decided.rule
        record = self._audit_record("tool", tool, decided.decision, rule.id if rule else "",
                                    decided.reason, tenant)
        return PolicyDecision(decided.decision, record, rule.route if rule else "")

    def approval_router(self, approvers: Mapping[str, Approver]) -> ApprovalRouter:
        """Route ``ask`` decisions to the approver named by each rule's ``route``."""
        return ApprovalRouter(self, approvers)

    def spend_ceilings(self, tenant: str | None = None) -> dict[str, float]:
        """The tightest deny ceiling per dimension (tokens, iterations, seconds, cost_usd)."""
        tightest: dict[str, float] = {}
        for rule in self._rules(SpendRuleDoc, tenant):
            if rule.action is Decision.DENY:
                for name, value in rule.ceilings().items():
                    tightest[name] = min(value, tightest.get(name, value))
        return tightest

    def check_spend(self, spend: Mapping[str, float], *, tenant: str | None = None,
                    subject: str = "run") -> PolicyDecision:
        """Judge a spend (e.g. a worst case) against the ceilings: deny, then ask, else allow."""
        rules = self._rules(SpendRuleDoc, tenant)
        for tier in (Decision.DENY, Decision.ASK):
            for rule in rules:
                over = [f"{name} {spend[name]} > {limit}" for name, limit in rule.ceilings().items()
                        if spend.get(name) is not None and spend[name] > limit]
                if rule.action is tier and over:
                    reason = rule.reason or "exceeds " + ", ".join(over)
                    return PolicyDecision(tier, self.record("spend", subject, tier, rule.id,
                                                             reason, tenant))
        return PolicyDecision(Decision.ALLOW, self.record(
            "spend", subject, Decision.ALLOW, "", "within every spend ceiling", tenant))

    def unknown_kinds(self, kinds: Iterable[str]) -> list[str]:
        """Rules naming (without a glob) a kind the registry lacks: a typo that could fail open."""
        known = set(kinds) | {"__start__", "__end__", "__scope__"}
        problems = []
        for rule in self.document.rules:
            names = [rule.kind] if isinstance(rule, NodeRuleDoc) else \
                [rule.source, rule.target] if isinstance(rule, EdgeRuleDoc) else []
            for name in names:
                if not _is_glob(name) and name not in known:
                    problems.append(f"rule {rule.id!r} names kind {name!r}, "
                                    "which the registry does not have")
        return problems

    def summary(self) -> str:
        """One line for humans: the description, or the version."""
        return self.description or f"version {self.version}"


def _is_glob(name: str) -> bool:
    return any(char in name for char in "*?[")


class ApprovalRouter:
    """Turns ``ask`` into allow or deny by the one approval model (``grapharc.decisions.approval``), with
    the approver of the rule's route where no session holds the ask.

    A route with no approver, or an approver that raises or says no, denies:
    approval fails closed. Every routed outcome is audited as resource ``approval``.
    """

    def __init__(self, engine: PolicyEngine, approvers: Mapping[str, Approver]) -> None:
        self.engine = engine
        self.approvers = dict(approvers)

    def resolve(self, decided: PolicyDecision, arguments: dict[str, Any] | None = None) -> Decision:
        """The final decision: deny and allow stand; ask goes to the approval model (asking about
        ``arguments``, when the caller says exactly what would run)."""
        return Decision(self.settle(decided, arguments).decision)

    def settle(self, decided: PolicyDecision, arguments: dict[str, Any] | None = None) -> AuditRecord:
        """``resolve``, answering with the final decision's audit record (the approval's for an ask),
        so a caller reads its reason without racing other decisions onto the engine's log."""
        if decided.decision is not Decision.ASK:
            return decided.record
        record = decided.record
        route = decided.route or "human"
        answer = request_approval(ApprovalRequest.from_audit(record, route, arguments),
                                  self.approvers.get(route))
        reason = {Answer.APPROVED: f"approved via route {route!r}",
                  Answer.DECLINED: f"declined via route {route!r}",
                  Answer.UNANSWERED: f"no approver for route {route!r}"}[answer]
        final = Decision.ALLOW if answer is Answer.APPROVED else Decision.DENY
        return self.engine.record("approval", record.subject, final, record.rule_id, reason, record.tenant)
