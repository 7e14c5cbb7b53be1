"""What a run's caller may set in its LangGraph config, held to what the graph declares.

A GraphARC graph declares, as pydantic models, the keys of ``config["configurable"]`` its nodes
read (``config_schema``) and its run's static context (``context_schema``, LangGraph's: a node
reads it with ``get_runtime().context``). A caller's ``CallerConfig`` (those values, and
``recursion_limit``, ``tags`` and ``metadata``) is checked against them (``problems``) and merged
under GraphARC's own config (``runnable``): the keys a session turn sets (the thread, its budget,
its turn) always win, and the keys that address a thread or a checkpoint are never the caller's
to set (``RESERVED``). A ``recursion_limit`` can only lower LangGraph's superstep cap: the run's
iteration budget still bounds it (``grapharc.runtime.lifecycle``), so the budget wins.

A ``CallerConfig`` is plain JSON data (``to_json`` / ``from_json``), so a durable run record can
keep it and a worker that reclaims the run drives it with the same config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from grapharc.runtime.errors import GraphBuildError

RESERVED = frozenset({"thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map"})
"""``configurable`` keys that say which thread and checkpoint a run addresses: never a caller's."""
RESERVED_PREFIXES = ("grapharc_", "__")
"""``configurable`` keys GraphARC (``grapharc_*``) and LangGraph (``__*``) set for themselves."""


def reserved(key: str) -> bool:
    """True for a ``configurable`` key no caller may set and no graph may declare."""
    return key in RESERVED or key.startswith(RESERVED_PREFIXES)


def _model(kind: str, schema: Any) -> type[BaseModel] | None:
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise GraphBuildError(f"{kind} must be a pydantic model class, got {schema!r}",
                              hint="declare it as a subclass of pydantic.BaseModel")
    return schema


def declared_configurable(schema: Any) -> type[BaseModel] | None:
    """``config_schema`` checked as a graph declares it: a pydantic model naming no reserved key."""
    model = _model("config_schema", schema)
    taken = sorted(name for name in (model.model_fields if model else ()) if reserved(name))
    if taken:
        raise GraphBuildError(f"config_schema declares reserved configurable keys: {', '.join(taken)}",
                              hint="thread_id, checkpoint_ns, checkpoint_id, checkpoint_map, grapharc_* and "
                                   "__* are set by GraphARC and LangGraph; rename the field")
    return model


def declared_context(schema: Any) -> type[BaseModel] | None:
    """``context_schema`` checked as a graph declares it: a pydantic model."""
    return _model("context_schema", schema)


def _errors(exc: ValidationError, *where: str) -> list[dict[str, Any]]:
    return [{"loc": [*where, *e["loc"]], "msg": e["msg"], "type": e["type"]} for e in exc.errors()]


@dataclass(frozen=True, slots=True)
class CallerConfig:
    """A run's config as its caller gave it (JSON data), before it is checked against a graph."""

    configurable: Mapping[str, Any] = field(default_factory=dict)
    context: Mapping[str, Any] | None = None
    recursion_limit: int | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The config as JSON data, for a durable record."""
        return {"configurable": dict(self.configurable), "context": self.context,
                "recursion_limit": self.recursion_limit, "tags": list(self.tags),
                "metadata": dict(self.metadata)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> CallerConfig | None:
        """A config ``to_json`` wrote (None for none)."""
        if data is None:
            return None
        return cls(configurable=data.get("configurable") or {}, context=data.get("context"),
                   recursion_limit=data.get("recursion_limit"), tags=tuple(data.get("tags") or ()),
                   metadata=data.get("metadata") or {})

    def problems(self, config_schema: type[BaseModel] | None,
                 context_schema: type[BaseModel] | None) -> list[dict[str, Any]]:
        """Every way this config does not fit the graph's declarations, as pydantic-style errors
        (``loc`` names the key): reserved or undeclared configurable keys, values of the wrong type,
        a context the graph has no schema for or that does not fit it."""
        where = ("config", "configurable")
        errors = [{"loc": [*where, key], "type": "reserved",
                   "msg": "names the thread or checkpoint, or is GraphARC's or LangGraph's own: "
                          "a caller may not set it"}
                  for key in self.configurable if reserved(key)]
        declared = config_schema.model_fields if config_schema is not None else {}
        errors += [{"loc": [*where, key], "type": "extra_forbidden",
                    "msg": "not a configurable key the graph declares"}
                   for key in self.configurable if not reserved(key) and key not in declared]
        if config_schema is not None and not errors:
            try:
                config_schema.model_validate(dict(self.configurable))
            except ValidationError as exc:
                errors += _errors(exc, *where)
        if context_schema is None:
            if self.context is not None:
                errors.append({"loc": ["context"], "type": "extra_forbidden",
                               "msg": "the graph declares no context_schema, so a run takes no context"})
            return errors
        try:
            context_schema.model_validate(dict(self.context or {}))
        except ValidationError as exc:
            errors += _errors(exc, "context")
        return errors

    def runnable(self, config_schema: type[BaseModel] | None, own: RunnableConfig) -> RunnableConfig:
        """``own`` (GraphARC's config for the run) with this caller's config beneath it: the
        declared configurable keys with their defaults, tags, metadata and recursion limit."""
        values = (config_schema.model_validate(dict(self.configurable)).model_dump(mode="json")
                  if config_schema is not None else {})
        merged: RunnableConfig = {**own,
                                  "configurable": {**values, **(own.get("configurable") or {})},
                                  "metadata": {**self.metadata, **(own.get("metadata") or {})}}
        if self.tags:
            merged["tags"] = [*self.tags, *(own.get("tags") or ())]
        if self.recursion_limit is not None:
            merged["recursion_limit"] = self.recursion_limit
        return merged

    def context_for(self, context_schema: type[BaseModel] | None) -> BaseModel | None:
        """The run's context as the graph's ``context_schema`` instance (None: it declares none)."""
        return context_schema.model_validate(dict(self.context or {})) if context_schema is not None else None
