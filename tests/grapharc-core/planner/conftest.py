"""Shared pieces for the planner tests: a small registry whose factories count their calls."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from grapharc.harness.permissions import Decision
from grapharc.planner import CostEstimate, EdgePolicy, EdgeRule, NodeRegistry, NodeSpec


class PathArgs(BaseModel):
    """The args a ``read`` node accepts: one relative path, nothing else."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(pattern=r"^[a-z_/]+$")
    limit: int = 10


class State(BaseModel):
    found: str = ""
    fixed: str = ""
    read: str = ""


class Factories:
    """Factories that record every call, so a test can prove none happened."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __call__(self, spec: NodeSpec, args: Any = None) -> Any:
        self.calls.append((spec.name, args))

        def body(state: State) -> dict[str, Any]:
            if spec.name == "read":
                return {"read": f"{args.path}:{args.limit}"}
            return {"found": "cause"} if spec.name == "search" else {"fixed": spec.name}

        return body


@pytest.fixture
def factories() -> Factories:
    return Factories()


@pytest.fixture
def registry(factories: Factories) -> NodeRegistry:
    return NodeRegistry([
        NodeSpec(name="search", factory=factories, worst_case=CostEstimate(tokens=500)),
        NodeSpec(name="edit", factory=factories, worst_case=CostEstimate(tokens=2000)),
        NodeSpec(name="deploy", factory=factories),
        NodeSpec(name="read", factory=factories, args_schema=PathArgs),
    ]).freeze()


@pytest.fixture
def deny_deploy() -> EdgePolicy:
    return EdgePolicy(rules=(EdgeRule(action=Decision.DENY, target="deploy", id="no-deploy"),
                             EdgeRule(action=Decision.ALLOW, id="rest")))
