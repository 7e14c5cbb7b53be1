"""OpenRouter routing: model fallback chains and provider preferences, passed through as-is.

``fallback_models`` becomes OpenRouter's ``models`` list (the primary first), and
``ProviderRouting`` its ``provider`` object (``order``, ``sort``, ``max_price``,
``allow_fallbacks``). GraphARC decides none of it; it only puts the caller's choice
in the request body, where OpenRouter applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grapharc.errors import ConfigurationError

SORTS = frozenset({"price", "throughput", "latency"})


@dataclass(frozen=True)
class ProviderRouting:
    """Which upstream providers OpenRouter may use for a model, and how to choose among them.

    ``max_price`` is OpenRouter's shape: dollars per million tokens, keyed
    ``prompt`` / ``completion`` (and ``request`` / ``image``).
    """

    order: tuple[str, ...] = ()
    sort: str | None = None
    max_price: Mapping[str, float] | None = None
    allow_fallbacks: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", tuple(self.order))
        if self.sort is not None and self.sort not in SORTS:
            raise ConfigurationError(f"ProviderRouting.sort must be one of {sorted(SORTS)}, "
                                     f"got {self.sort!r}")

    @classmethod
    def coerce(cls, value: ProviderRouting | Mapping[str, Any]) -> ProviderRouting:
        """Accept a ProviderRouting or a mapping of its fields."""
        if isinstance(value, ProviderRouting):
            return value
        unknown = set(value) - {"order", "sort", "max_price", "allow_fallbacks"}
        if unknown:
            raise ConfigurationError(f"unknown OpenRouter provider preference(s) {sorted(unknown)}; "
                                     "known: order, sort, max_price, allow_fallbacks")
        return cls(**value)

    def body(self) -> dict[str, Any]:
        """The ``provider`` object for the request body (only the fields that were set)."""
        body: dict[str, Any] = {}
        if self.order:
            body["order"] = list(self.order)
        if self.sort is not None:
            body["sort"] = self.sort
        if self.max_price is not None:
            body["max_price"] = dict(self.max_price)
        if self.allow_fallbacks is not None:
            body["allow_fallbacks"] = self.allow_fallbacks
        return body


def routing_body(model: str, fallback_models: Sequence[str],
                 provider: ProviderRouting | None) -> dict[str, Any]:
    """The fields OpenRouter reads for routing and per-call cost, for ``extra_body``."""
    body: dict[str, Any] = {"usage": {"include": True}}
    if fallback_models:
        body["models"] = [model, *fallback_models]
    if provider is not None and provider.body():
        body["provider"] = provider.body()
    return body
