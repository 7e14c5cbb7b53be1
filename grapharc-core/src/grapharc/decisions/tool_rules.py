"""Tool permissions: deny -> ask -> allow over tool-name globs, unmatched is deny.

The policy engine compiles a document's tool rules into a :class:`PermissionPolicy` and the agent
merges its ``--allow/--ask/--deny`` flags into it, so it sits below both.

Evaluation is tiered, not first-written-wins: every deny rule is consulted
before any ask rule, and every ask before any allow. Rules from several layers
(a policy document, ``--allow/--ask/--deny`` flags) are merged into one policy
and evaluated the same way, so **a deny from any layer beats an allow from any
other** — in particular a document deny beats a CLI flag allow, and a flag can
only narrow what a document permits. A denied tool is also invisible:
:meth:`PermissionPolicy.visible` drops it before any schema reaches a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from grapharc.decisions.decision import TIERS, Decision


@dataclass(frozen=True)
class PermissionRule:
    """One tool rule: a glob over tool names, its decision, and where it came from."""

    tool: str
    action: Decision
    id: str = ""
    reason: str = ""
    route: str = "human"
    layer: str = "flag"

    def matches(self, tool: str) -> bool:
        return fnmatchcase(tool, self.tool)


@dataclass(frozen=True)
class PermissionDecision:
    """The outcome for one tool: the decision and the rule that made it (None: unmatched)."""

    tool: str
    decision: Decision
    rule: PermissionRule | None

    @property
    def reason(self) -> str:
        if self.rule is None:
            return "no rule matches this tool, and unmatched is deny"
        return self.rule.reason or f"{self.rule.layer} rule {self.rule.tool!r} says {self.decision.value}"


class PermissionPolicy:
    """A merged set of tool rules evaluated deny -> ask -> allow."""

    def __init__(self, rules: Iterable[PermissionRule] = ()) -> None:
        self.rules: tuple[PermissionRule, ...] = tuple(rules)

    @classmethod
    def from_flags(cls, *, allow: Iterable[str] = (), ask: Iterable[str] = (),
                   deny: Iterable[str] = (), layer: str = "flag") -> PermissionPolicy:
        """Rules from ``--allow/--ask/--deny`` glob flags (layer ``flag``), or from another
        ``layer`` of globs (``default``: what an agent with no policy and no flags is given); each
        rule's id is ``LAYER-ACTION:GLOB``."""
        return cls([PermissionRule(glob, action, id=f"{layer}-{action.value}:{glob}", layer=layer)
                    for action, globs in ((Decision.DENY, deny), (Decision.ASK, ask),
                                          (Decision.ALLOW, allow))
                    for glob in globs])

    def merged(self, other: PermissionPolicy) -> PermissionPolicy:
        """Both layers' rules in one policy; tiers still decide, so any deny wins."""
        return PermissionPolicy((*self.rules, *other.rules))

    def decide(self, tool: str) -> PermissionDecision:
        """The first rule of the strictest tier that matches ``tool``; unmatched is deny."""
        for tier in TIERS:
            for rule in self.rules:
                if rule.action is tier and rule.matches(tool):
                    return PermissionDecision(tool, tier, rule)
        return PermissionDecision(tool, Decision.DENY, None)

    def visible(self, tools: Iterable[str]) -> list[str]:
        """The tools a model may be shown: every one not denied (ask-gated ones included)."""
        return [tool for tool in tools if self.decide(tool).decision is not Decision.DENY]
