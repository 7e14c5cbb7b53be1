"""Proposals: the typed, code-free description of a subgraph a planner wants built.

``Subgraph``, ``ProposedNode`` and ``ProposedEdge`` are Pydantic models with
``extra="forbid"``, so a ``body=`` or ``fn=`` key is a validation error: a
proposal names registry kinds and carries plain-data args (JSON values, finite
numbers), nothing callable, so its fingerprint always exists.
A node may hold a nested ``subgraph`` (a scope it runs as its body). Parsing
bounds size and depth before Pydantic sees the data, and every error names
where in the document it is.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_serializer,
    model_validator,
)

from grapharc.errors import GraphARCError

START = "__start__"
END = "__end__"
SCOPE_KIND = "__scope__"
RESERVED = frozenset({START, END, SCOPE_KIND, "START", "END"})  # the kernel aliases the last two
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
MAX_JSON_DEPTH = 64


class ProposalError(GraphARCError):
    """A proposal (or graph file) that is not a well-formed subgraph; names where."""

    hint = "a proposal is {\"nodes\": [{\"name\": ..., \"kind\": ...}], \"edges\": [...]}"


class ProposedEdge(BaseModel):
    """A directed edge between two node names of the same scope (or START / END)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    source: str = Field(min_length=1, max_length=200)
    target: str = Field(min_length=1, max_length=200)


class ProposedNode(BaseModel):
    """One node instance: its name, the registry kind it is, plain-data args, or a nested scope.

    ``kind`` defaults to ``name`` (the shorthand ``{"name": "triage"}``); once
    set, only ``kind`` is consulted, so a name never borrows a permission.
    A node with a ``subgraph`` is a scope: it runs that subgraph as its body.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=200)
    kind: str = Field(default="", max_length=200)
    args: dict[str, JsonValue] = Field(default_factory=dict)
    subgraph: Subgraph | None = None

    @field_serializer("args")
    def _canonical_args(self, args: dict[str, JsonValue]) -> dict[str, Any]:
        return _sorted_keys(args) if args else args

    @model_validator(mode="before")
    @classmethod
    def _kind_defaults_to_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" not in data and data.get("subgraph") is None:
            return {**data, "kind": data.get("name")}
        return data

    @model_validator(mode="after")
    def _identify(self) -> ProposedNode:
        if not self.name.isidentifier():
            raise ValueError(f"node name {self.name!r} must be an identifier")
        if self.subgraph is not None and self.kind:
            raise ValueError(f"node {self.name!r} has a subgraph, so it is a scope and takes no kind")
        if self.subgraph is None and not self.kind:
            raise ValueError(f"node {self.name!r} names no kind")
        if self.subgraph is not None and self.args:
            raise ValueError(f"scope node {self.name!r} takes no args")
        return self

    @property
    def policy_kind(self) -> str:
        """The kind policy rules see: the registry kind, or ``__scope__`` for a nested scope."""
        return self.kind or SCOPE_KIND


class Subgraph(BaseModel):
    """A proposed topology: nodes, and the edges wiring them within this scope."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    nodes: list[ProposedNode] = Field(min_length=1)
    edges: list[ProposedEdge] = Field(default_factory=list)
    rationale: str = Field(default="", max_length=10_000, exclude=True)

    @model_validator(mode="after")
    def _unique_names(self) -> Subgraph:
        seen: set[str] = set()
        for index, node in enumerate(self.nodes):
            if node.name in RESERVED:
                raise ValueError(f"nodes[{index}]: {node.name!r} is reserved")
            if node.name in seen:
                raise ValueError(f"nodes[{index}]: node name {node.name!r} is used twice")
            seen.add(node.name)
        return self

    def fingerprint(self) -> str:
        """A digest of the proposal's canonical JSON: what an admission authorises."""
        return fingerprint(self)


ProposedNode.model_rebuild()


def fingerprint(proposal: Subgraph) -> str:
    """sha256 over canonical JSON: fields in schema order, args keys sorted, rationale excluded."""
    serialized = type(proposal).__pydantic_serializer__.to_json(proposal)  # bytes, no str copy
    return hashlib.sha256(serialized).hexdigest()


def _sorted_keys(value: Any) -> Any:
    """``value`` with every mapping's keys sorted, so equal args serialise identically."""
    if isinstance(value, dict):
        return {key: _sorted_keys(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_keys(item) for item in value]
    return value


def json_depth_error(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Where ``value`` nests deeper than ``limit`` containers, or None; iterative, O(size)."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "$")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return path
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                stack.append((child, depth + 1,
                              f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"))
    return None


def location(loc: tuple[Any, ...]) -> str:
    """Render a Pydantic error location as ``nodes[1].kind``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part not in {"ProposedNode", "Subgraph"}:
            text += f".{part}" if text else str(part)
    return text or "(document)"


def proposal_from_data(data: Any, where: str = "proposal") -> Subgraph:
    """Validate already-decoded JSON data as a ``Subgraph``, naming every bad location."""
    deep = json_depth_error(data)
    if deep is not None:
        raise ProposalError(f"{where}: nesting deeper than {MAX_JSON_DEPTH} levels at {deep}")
    if not isinstance(data, dict):
        raise ProposalError(f"{where}: expected a JSON object, got {type(data).__name__}")
    try:
        return Subgraph.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{location(tuple(err['loc']))}: {err['msg']}"
                             for err in exc.errors()[:10])
        more = f" (and {exc.error_count() - 10} more)" if exc.error_count() > 10 else ""
        raise ProposalError(f"{where}: {problems}{more}") from None
    except RecursionError:
        raise ProposalError(f"{where}: nesting too deep to validate") from None


def decode_json(text: str, where: str) -> Any:
    """``json.loads`` with errors that name line and column, and no crash on bad depth or size."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise ProposalError(f"{where}: larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ProposalError(f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                            f"{exc.msg}") from None
    except RecursionError:
        raise ProposalError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise ProposalError(f"{where}: unreadable number: {exc}") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_proposal(text: str | bytes, where: str = "proposal") -> Subgraph:
    """Parse a JSON document into a ``Subgraph``; binary or malformed input raises ProposalError."""
    if isinstance(text, bytes):
        if b"\x00" in text[:8192]:
            raise ProposalError(f"{where}: binary data, not a JSON document")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProposalError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    return proposal_from_data(decode_json(text, where), where)
