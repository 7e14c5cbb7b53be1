"""A run request's budget, held to the operator's ceiling (``grapharc serve --max-*``).

A request may ask for less than the ceiling in any dimension, never more: above it the request
is refused (422 naming the dimension) before anything runs. The run is then metered against the
stricter of the ceiling, the request and the graph's own budget, dimension by dimension; with
no request it runs under the ceiling. Sessions meter their budget thread-wide, so a run's
budget bounds what the thread has spent by the run's end, earlier turns included.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from grapharc.runtime.budget import Budget
from grapharc.server.api.problems import ApiProblem

Count = Annotated[int, Field(gt=0, strict=True)]
Amount = Annotated[float, Field(gt=0)]


class BudgetRequest(BaseModel):
    """``budget`` in a run request: what this run may spend (each dimension optional)."""

    model_config = ConfigDict(extra="forbid")
    max_tokens: Count | None = None
    max_iterations: Count | None = None
    max_seconds: Amount | None = None
    max_cost_usd: Amount | None = None

    @field_validator("max_seconds", "max_cost_usd")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


def run_budget(requested: BudgetRequest | None, ceiling: Budget) -> Budget | None:
    """The budget a run is held to: the request within the ceiling (422 for a dimension above
    it), or the ceiling itself; None when neither limits anything."""
    asked: dict[str, Any] = requested.model_dump(exclude_none=True) if requested is not None else {}
    over = [(name, value, getattr(ceiling, name)) for name, value in asked.items()
            if getattr(ceiling, name) is not None and value > getattr(ceiling, name)]
    if over:
        raise ApiProblem(422, "the run's budget is above this server's ceiling in "
                              + ", ".join(f"{name} ({value} > {limit})" for name, value, limit in over),
                         errors=[{"loc": ["body", "budget", name], "msg": f"at most {limit}",
                                  "type": "less_than_equal"} for name, _value, limit in over],
                         hint="ask for no more than the ceiling, or leave the dimension out to run under it")
    budget = ceiling.tightened(Budget(**asked))
    return None if budget == Budget() else budget
