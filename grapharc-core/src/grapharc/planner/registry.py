"""The node registry: the kinds a planner may propose, each with its factory and worst case.

A registry holds functions, so it is written by people and frozen before use;
a proposal only ever names a kind from it. This module imports nothing heavy,
because plugins build ``NodeSpec`` objects in their hook modules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from grapharc.errors import GraphARCError

if TYPE_CHECKING:
    from pydantic import BaseModel


class DuplicateKindError(GraphARCError):
    """Two node specs share one kind name."""


class RegistryFrozenError(GraphARCError):
    """A frozen registry was asked to change."""


class UnknownKindError(GraphARCError, LookupError):
    """A kind name the registry does not hold."""


@dataclass(frozen=True)
class CostEstimate:
    """The worst case one execution of a kind may cost, charged against the budget at admission."""

    tokens: int = 0
    seconds: float = 0.0
    iterations: int = 1
    cost_usd: float = 0.0

    def __post_init__(self) -> None:
        for name in ("tokens", "seconds", "iterations", "cost_usd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise ValueError(f"CostEstimate.{name} must be a number >= 0, got {value!r}")


@dataclass(frozen=True)
class NodeSpec:
    """A proposable kind: its name, the factory that builds its body, and its worst case.

    ``args_schema`` (a Pydantic model class) validates a proposal's args at
    admission; a kind without one receives no args at all. The materialiser
    calls ``factory(spec)``, or ``factory(spec, args)`` with the validated args
    model when the kind has a schema; the factory returns the node's body.

    ``writes`` names the state fields the body may write: a set of names the run's
    state must already have, or a mapping of names to types (``{"answer": str}``)
    that brings the fields with it, so a run with the ``plugins`` registry has them.
    Either way ``writes`` holds the names afterwards and ``write_types`` the types.
    """

    name: str
    factory: Callable[..., Any]
    worst_case: CostEstimate = field(default_factory=CostEstimate)
    args_schema: type[BaseModel] | None = None
    description: str = ""
    writes: Iterable[str] | Mapping[str, Any] = frozenset()  # a frozenset of names once built
    write_types: Mapping[str, Any] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"NodeSpec name must be an identifier, got {self.name!r}")
        if not callable(self.factory):
            raise ValueError(f"NodeSpec {self.name!r}: factory must be callable")
        if self.args_schema is not None and not callable(getattr(self.args_schema, "model_validate", None)):
            raise ValueError(f"NodeSpec {self.name!r}: args_schema must be a Pydantic model class")
        declared: Any = self.writes
        if isinstance(declared, str | bytes) or not isinstance(declared, Iterable):
            raise ValueError(f"NodeSpec {self.name!r}: writes must be a set of field names or a "
                             f"mapping of field names to types, got {declared!r}")
        types = dict(declared) if isinstance(declared, Mapping) else {}
        names = frozenset(declared)
        for name in sorted(names, key=repr):
            if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
                raise ValueError(f"NodeSpec {self.name!r}: written field {name!r} must be an "
                                 "identifier that does not start with '_'")
        object.__setattr__(self, "writes", names)
        object.__setattr__(self, "write_types", MappingProxyType(types))

    def describe(self) -> dict[str, Any]:
        """What a planner may see of this kind: never the factory."""
        described: dict[str, Any] = {
            "kind": self.name,
            "description": self.description,
            "worst_case": {"tokens": self.worst_case.tokens, "seconds": self.worst_case.seconds,
                           "iterations": self.worst_case.iterations,
                           "cost_usd": self.worst_case.cost_usd},
        }
        if self.args_schema is not None:
            described["args_schema"] = self.args_schema.model_json_schema()
        return described


class NodeRegistry:
    """An ordered set of ``NodeSpec`` by kind name; freeze it before admitting anything."""

    def __init__(self, specs: Iterable[NodeSpec] = ()) -> None:
        self._specs: dict[str, NodeSpec] = {}
        self._frozen = False
        for spec in specs:
            self.add(spec)

    def add(self, spec: NodeSpec) -> NodeRegistry:
        if self._frozen:
            raise RegistryFrozenError(f"cannot add kind {spec.name!r}: the registry is frozen")
        if spec.name in self._specs:
            raise DuplicateKindError(f"kind {spec.name!r} is already in the registry")
        self._specs[spec.name] = spec
        return self

    def freeze(self) -> NodeRegistry:
        self._frozen = True
        return self

    @property
    def frozen(self) -> bool:
        return self._frozen

    def get(self, kind: str) -> NodeSpec:
        try:
            return self._specs[kind]
        except KeyError:
            known = ", ".join(self._specs) or "none"
            raise UnknownKindError(f"unknown kind {kind!r}; known kinds: {known}") from None

    def __contains__(self, kind: object) -> bool:
        return kind in self._specs

    def __iter__(self) -> Iterator[NodeSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def kinds(self) -> list[str]:
        return list(self._specs)

    def catalog(self) -> list[dict[str, Any]]:
        """What a planner is shown: kind, description, worst case and args schema."""
        return [spec.describe() for spec in self._specs.values()]
