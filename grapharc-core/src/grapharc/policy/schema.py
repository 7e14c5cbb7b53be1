"""The policy document's schema: one TOML file of tiered rules over nodes, edges, tools and spend.

    version     = "2026-08-01"            # required; lands on every audit record
    description = "deny -> deploy, otherwise allow"

    [[rules]]
    id       = "no-deploy"                # required, unique within the document
    resource = "edge"                     # node | edge | tool | spend
    action   = "deny"                     # deny | ask | allow (spend: deny | ask)
    target   = "deploy"                   # edge: source / target kind globs (default "*")
    reason   = "deploys need a change window"
    tenant   = "acme"                     # optional: the rule applies to this tenant only (any case)

node rules match ``kind``; tool rules match ``tool`` (a name glob) and may name
an approval ``route`` for ``ask``; spend rules are ceilings (``max_tokens``,
``max_iterations``, ``max_seconds``, ``max_cost_usd``) that match when exceeded.
Unknown keys and unknown resources are errors, never ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from grapharc.config.tenants import tenant_or_none
from grapharc.decisions.decision import Decision

Glob = Annotated[str, Field(min_length=1, max_length=200)]
MAX_CEILING = 10**15


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    action: Decision
    reason: str = Field(default="", max_length=2000)
    tenant: str | None = Field(default=None, min_length=1, max_length=200)

    @field_validator("tenant")
    @classmethod
    def _one_spelling(cls, tenant: str | None) -> str | None:
        """Kept case-folded, as every tenant is compared (``grapharc.config.tenants``)."""
        return tenant_or_none(tenant)


class NodeRuleDoc(_Rule):
    """Whether a kind may be proposed."""

    resource: Literal["node"]
    kind: Glob = "*"


class EdgeRuleDoc(_Rule):
    """Whether an edge may join a ``source`` kind to a ``target`` kind."""

    resource: Literal["edge"]
    source: Glob = "*"
    target: Glob = "*"


class ToolRuleDoc(_Rule):
    """Whether the agent harness may call a tool; ``ask`` goes to the approvers of ``route``."""

    resource: Literal["tool"]
    tool: Glob = "*"
    route: str = Field(default="human", min_length=1, max_length=200)


class SpendRuleDoc(_Rule):
    """A ceiling: spending past any of its limits matches the rule (deny or ask)."""

    resource: Literal["spend"]
    action: Literal[Decision.DENY, Decision.ASK]
    max_tokens: int | None = Field(default=None, gt=0, le=MAX_CEILING)
    max_iterations: int | None = Field(default=None, gt=0, le=MAX_CEILING)
    max_seconds: float | None = Field(default=None, gt=0, le=MAX_CEILING)
    max_cost_usd: float | None = Field(default=None, gt=0, le=MAX_CEILING)

    @field_validator("action", mode="before")
    @classmethod
    def _deny_or_ask(cls, value: Any) -> Any:
        """Say it in the document's words (Pydantic would name the enum members)."""
        if value not in (Decision.DENY, Decision.ASK):
            raise ValueError(f"a spend rule's action is deny or ask, got {value!r}")
        return value

    @model_validator(mode="after")
    def _has_a_ceiling(self) -> SpendRuleDoc:
        if not self.ceilings():
            raise ValueError(f"spend rule {self.id!r} sets no max_tokens, max_iterations, "
                             "max_seconds or max_cost_usd")
        return self

    def ceilings(self) -> dict[str, float]:
        """The limits this rule sets, by dimension (tokens, iterations, seconds, cost_usd)."""
        limits = {"tokens": self.max_tokens, "iterations": self.max_iterations,
                  "seconds": self.max_seconds, "cost_usd": self.max_cost_usd}
        return {name: value for name, value in limits.items() if value is not None}


RuleDoc = Annotated[NodeRuleDoc | EdgeRuleDoc | ToolRuleDoc | SpendRuleDoc,
                    Field(discriminator="resource")]
RESOURCES = ("node", "edge", "tool", "spend")


class PolicyDocument(BaseModel):
    """A whole policy document: its version, a one-line description and its rules."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(min_length=1, max_length=200)
    description: str = Field(default="", max_length=2000)
    rules: list[RuleDoc] = Field(default_factory=list, max_length=10_000)

    @model_validator(mode="after")
    def _unique_ids(self) -> PolicyDocument:
        for index, rule_id in repeated_ids(rule.id for rule in self.rules):
            raise ValueError(f"rules[{index}]: rule id {rule_id!r} is used twice")
        return self


def repeated_ids(ids: Iterable[Any]) -> list[tuple[int, Any]]:
    """(index, id) of every rule whose id an earlier rule already has."""
    seen: set[Any] = set()
    repeats = []
    for index, rule_id in enumerate(ids):
        if rule_id in seen:
            repeats.append((index, rule_id))
        seen.add(rule_id)
    return repeats
