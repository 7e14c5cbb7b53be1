"""Node and edge policies as admission consults them: tiered rules over registry kinds.

Every deny rule is consulted before any ask, every ask before any allow, and a
kind nothing matches is denied. Rules match *kinds* (globs), never instance
names. Decisions are memoised per kind (or kind pair), so judging E edges costs
O(E) dictionary look-ups once each distinct pair has been evaluated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from grapharc.decisions.audit import AuditRecord
from grapharc.decisions.decision import TIERS, Decision


@dataclass(frozen=True)
class RuleDecision:
    """What a policy decided and which rule decided it (``rule_id`` empty: unmatched)."""

    decision: Decision
    rule_id: str
    reason: str


@dataclass(frozen=True)
class NodeRule:
    """Whether a kind may be proposed at all."""

    action: Decision
    kind: str = "*"
    id: str = ""
    reason: str = ""

    def matches(self, kind: str) -> bool:
        return fnmatchcase(kind, self.kind)


@dataclass(frozen=True)
class EdgeRule:
    """Whether an edge may join a node of kind ``source`` to one of kind ``target``."""

    action: Decision
    source: str = "*"
    target: str = "*"
    id: str = ""
    reason: str = ""

    def matches(self, source: str, target: str) -> bool:
        return fnmatchcase(source, self.source) and fnmatchcase(target, self.target)


def _tiered(rules: Iterable[Any], matches: Callable[[Any], bool], subject: str) -> RuleDecision:
    """The first rule of the strictest tier that matches; unmatched is deny."""
    for tier in TIERS:
        for rule in rules:
            if rule.action is tier and matches(rule):
                return RuleDecision(tier, rule.id, rule.reason or f"rule says {tier.value}")
    return RuleDecision(Decision.DENY, "", f"no rule matches {subject}, and unmatched is deny")


@dataclass(frozen=True)
class _Policy:
    """What node and edge policies share: provenance for the audit records they produce."""

    version: str = ""
    digest: str = ""
    tenant: str | None = None
    _memo: dict[tuple[str, ...], tuple[RuleDecision, AuditRecord]] = field(
        default_factory=dict, compare=False, repr=False)

    def audit(self, resource: str, subject: str, decided: RuleDecision) -> AuditRecord:
        """The audit record of one decision about ``subject``."""
        return AuditRecord(resource, subject, decided.decision.value, decided.rule_id,
                           decided.reason, self.version, self.digest, self.tenant)


@dataclass(frozen=True)
class NodePolicy(_Policy):
    """Tiered rules over the kinds a proposal may use."""

    rules: tuple[NodeRule, ...] = ()

    def decide(self, kind: str) -> RuleDecision:
        return self.judge(kind)[0]

    def judge(self, kind: str) -> tuple[RuleDecision, AuditRecord]:
        """The decision on ``kind`` and its audit record, memoised (both are immutable)."""
        key = (kind,)
        judged = self._memo.get(key)
        if judged is None:
            decided = _tiered(self.rules, lambda rule: rule.matches(kind), f"kind {kind!r}")
            judged = self._memo[key] = (decided, self.audit("node", kind, decided))
        return judged


@dataclass(frozen=True)
class EdgePolicy(_Policy):
    """Tiered rules over the (source kind, target kind) pairs a proposal may wire."""

    rules: tuple[EdgeRule, ...] = ()

    def decide(self, source: str, target: str) -> RuleDecision:
        return self.judge(source, target)[0]

    def judge(self, source: str, target: str) -> tuple[RuleDecision, AuditRecord]:
        """The decision on an edge between two kinds and its audit record, memoised."""
        key = (source, target)
        judged = self._memo.get(key)
        if judged is None:
            decided = _tiered(self.rules, lambda rule: rule.matches(source, target),
                              f"edge {source} -> {target}")
            judged = self._memo[key] = (decided, self.audit("edge", f"{source} -> {target}",
                                                            decided))
        return judged
