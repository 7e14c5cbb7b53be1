"""Typed state: the ``GraphARCState`` base and the contract every write is checked against.

``StateContract`` is built once per compile. It holds a pydantic ``TypeAdapter`` per
field (built from the field's own ``FieldInfo``, so ``Field(gt=0)`` and
``AfterValidator`` bite) and knows which fields have a LangGraph reducer. When the
model declares its own ``@field_validator`` / ``@model_validator``, a write is also
validated as part of the whole model, so those validators run on every write too;
models without them pay only the per-field check.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, PydanticUserError, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from grapharc.runtime.errors import (
    StateTypeError,
    UnknownFieldError,
    WritePermissionError,
)

# Model config keys that describe the model as a whole rather than how a value validates.
_MODEL_ONLY_CONFIG = frozenset(
    {"title", "extra", "frozen", "validate_assignment", "revalidate_instances", "defer_build"}
)


class GraphARCState(BaseModel):
    """Base class for graph state: a pydantic model that refuses fields it does not declare."""

    model_config = ConfigDict(extra="forbid")


def type_name(annotation: Any) -> str:
    """A short human rendering of a field's declared type ('int', 'list[str]')."""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _first_error(error: ValidationError) -> str:
    """The first pydantic error message, with its location when it has one."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first['msg']}" if where else first["msg"]


def _adapter(annotation: Any, config: ConfigDict) -> TypeAdapter:
    """A TypeAdapter under the model's config, unless the type carries a config of its own."""
    try:
        return TypeAdapter(annotation, config=config or None)
    except PydanticUserError as error:
        if error.code != "type-adapter-config-unused":
            raise
        return TypeAdapter(annotation)


class FieldContract:
    """How one field validates: its adapter, its display type and its reducer, if any."""

    __slots__ = ("adapter", "empty", "expected", "name", "reducer")

    def __init__(self, name: str, info: FieldInfo, config: ConfigDict, reducer: Callable | None) -> None:
        self.name = name
        self.adapter = _adapter(Annotated[info.annotation, info], config)
        self.expected = type_name(info.annotation)
        self.reducer = reducer
        self.empty: Callable[[], Any] | None = (
            None if info.is_required() else lambda: copy.deepcopy(info.get_default(call_default_factory=True))
        )


class StateContract:
    """The state schema as the kernel enforces it: field types, reducers and validators."""

    def __init__(self, schema: type[BaseModel], reducers: Mapping[str, Callable]) -> None:
        self.schema = schema
        config = ConfigDict(**{k: v for k, v in schema.model_config.items() if k not in _MODEL_ONLY_CONFIG})
        self.fields: dict[str, FieldContract] = {
            name: FieldContract(name, info, config, reducers.get(name))
            for name, info in schema.model_fields.items()
        }
        self.field_names = frozenset(self.fields)
        self.reducer_fields = frozenset(n for n, f in self.fields.items() if f.reducer)
        decorators = schema.__pydantic_decorators__
        self.has_validators = bool(
            decorators.field_validators
            or decorators.model_validators
            or decorators.validators
            or decorators.root_validators
        )

    def require_fields(self, where: str, names: Iterable[str]) -> None:
        """Raise UnknownFieldError for the first name that is not a state field."""
        for name in names:
            if name not in self.fields:
                raise UnknownFieldError(where, name, self.field_names)

    def check_writes(
        self,
        node: str,
        declared: frozenset[str],
        writes: Mapping[str, Any],
        current: BaseModel | None,
        *,
        writer: str | None = None,
    ) -> dict[str, Any]:
        """Return the writes as they should land, or raise naming node, field and type.

        ``current`` is the state the node read (None for Send workers, which read a
        payload); with it, a model that declares validators is validated whole.
        """
        landed: dict[str, Any] = {}
        for field, value in writes.items():
            if field not in declared:
                raise WritePermissionError(node, field, declared)
            spec = self.fields[field]
            landed[field] = (
                self._fit(node, spec, value, writer)
                if spec.reducer is None
                else self._fit_reduced(node, spec, value, writer)
            )
        if self.has_validators and current is not None and landed:
            return self._validate_whole(node, landed, current, writer)
        return landed

    def check_values(self, where: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check run input or an operator's update: known fields, declared types."""
        self.require_fields(where, values)
        return {field: self._fit(where, self.fields[field], value, where) for field, value in values.items()}

    def _fit(self, node: str, spec: FieldContract, value: Any, writer: str | None) -> Any:
        try:
            return spec.adapter.validate_python(value)
        except ValidationError as error:
            raise StateTypeError(
                node, spec.name, spec.expected, value, _first_error(error), writer=writer
            ) from None

    def _fit_reduced(self, node: str, spec: FieldContract, value: Any, writer: str | None) -> Any:
        """A reducer field's update is either a value of the field's type or one the reducer
        turns into one (e.g. a single message for add_messages); either way it must fit."""
        try:
            return spec.adapter.validate_python(value)
        except ValidationError as error:
            if spec.empty is None or spec.reducer is None:
                raise StateTypeError(
                    node, spec.name, spec.expected, value, _first_error(error), writer=writer
                ) from None
            try:
                spec.adapter.validate_python(spec.reducer(spec.empty(), value))
            except Exception:
                raise StateTypeError(
                    node, spec.name, spec.expected, value, _first_error(error), writer=writer
                ) from None
            return value

    def _validate_whole(
        self, node: str, landed: dict[str, Any], current: BaseModel, writer: str | None
    ) -> dict[str, Any]:
        """Run the model's own validators over the state as it would be after these writes."""
        candidate = dict(current.__dict__)
        for field, value in landed.items():
            reducer = self.fields[field].reducer
            candidate[field] = value if reducer is None else reducer(candidate[field], value)
        try:
            model = self.schema.model_validate(candidate)
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            loc = first.get("loc", ())
            field = str(loc[0]) if loc and loc[0] in landed else ", ".join(sorted(landed))
            expected = self.fields[field].expected if field in self.fields else self.schema.__name__
            value = landed.get(field, {k: landed[k] for k in sorted(landed)})
            raise StateTypeError(node, field, expected, value, _first_error(error), writer=writer) from None
        return {
            field: value if self.fields[field].reducer else getattr(model, field)
            for field, value in landed.items()
        }
