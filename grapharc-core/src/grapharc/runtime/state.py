"""Typed state: the ``GraphARCState`` base and the contract every write is checked against.

``StateContract`` is built once per compile. It holds a pydantic ``TypeAdapter`` per
field (built from the field's own ``FieldInfo``, so ``Field(gt=0)`` and
``AfterValidator`` bite) and knows which fields have a LangGraph reducer. When the
model declares its own ``@field_validator`` / ``@model_validator``, a write is also
validated as part of the whole model, so those validators run on every write too;
models without them pay only the per-field check. Every value that lands must also fit
the checkpoint: LangGraph's msgpack serializer holds integers from -2**63 to 2**64-1 and
fails the whole checkpoint write on a wider one, so a write holding one is refused,
naming the node, the field and where in the value it sits.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal, get_args

import orjson
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel, ConfigDict, PydanticUserError, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from grapharc.runtime.errors import (
    RunInputError,
    StateTypeError,
    UnknownFieldError,
    WritePermissionError,
)

# The integers LangGraph's msgpack checkpoint serializer can store (int64 and uint64).
CHECKPOINT_INT_MIN = -(2**63)
CHECKPOINT_INT_MAX = 2**64 - 1
Reducer = Callable[[Any, Any], Any]
"""A LangGraph channel reducer: (current value, update) to the new value."""

_PLAIN = (str, bytes, float, bool, type(None))  # values that hold no integer at all
_AS_IS: tuple[type, ...] = (int, float, bool, str)
"""Field types whose validator, with no constraint and no string option set, returns a value of
exactly that type unchanged."""
_STR_OPTIONS = ("str_strip_whitespace", "str_to_lower", "str_to_upper", "str_min_length", "str_max_length")
_SERDE = JsonPlusSerializer()
"""LangGraph's default checkpoint serializer: what a value must survive to be stored."""

# Model config keys that describe the model as a whole rather than how a value validates.
ModelOnlyConfig = Literal[
    "title", "extra", "frozen", "validate_assignment", "revalidate_instances", "defer_build"
]
_MODEL_ONLY_CONFIG: tuple[ModelOnlyConfig, ...] = get_args(ModelOnlyConfig)


class GraphARCState(BaseModel):
    """Base class for graph state: a pydantic model that refuses fields it does not declare."""

    model_config = ConfigDict(extra="forbid")


def type_name(annotation: Any) -> str:
    """A short human rendering of a field's declared type ('int', 'list[str]')."""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def channel_reducers(channels: Mapping[str, Any]) -> dict[str, Reducer]:
    """The reducer of each LangGraph state channel that has one (``Annotated[T, operator.add]``)."""
    return {
        name: channel.operator
        for name, channel in channels.items()
        if isinstance(channel, BinaryOperatorAggregate)
    }


def _inside(item: Any) -> Iterable[tuple[str, Any]]:
    """Each value directly inside a container, model or dataclass instance, with where it sits."""
    if isinstance(item, list | tuple):
        return ((f"[{index}]", child) for index, child in enumerate(item))
    if isinstance(item, Mapping):
        return [*((f" key {key!r}", key) for key in item), *((f"[{key!r}]", v) for key, v in item.items())]
    if isinstance(item, set | frozenset):
        return ((" member", child) for child in item)
    if isinstance(item, BaseModel):
        return ((f".{name}", child) for name, child in item)
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return ((f".{field.name}", getattr(item, field.name)) for field in dataclasses.fields(item))
    return ()


def _as_plain(item: Any) -> Any:
    """orjson's fallback: a model as its fields, a set as a list; anything else holds nothing."""
    if isinstance(item, BaseModel):
        return {**item.__dict__, **(item.__pydantic_extra__ or {})}
    if isinstance(item, set | frozenset):
        return list(item)
    return None


def unstorable_int(value: Any, where: str) -> str | None:
    """Where in ``value`` (named from ``where``) an integer a checkpoint cannot store sits, or None.

    orjson refuses exactly the integers msgpack does, in C: when it encodes the value, every
    integer fits. Otherwise (a wide integer, or something else orjson refuses, such as a
    tuple key) the walk decides, visiting each container once.
    """
    try:
        orjson.dumps(value, default=_as_plain, option=orjson.OPT_NON_STR_KEYS)
        return None
    except TypeError:
        pass
    stack, seen = [(where, value)], set()
    while stack:
        at, item = stack.pop()
        if isinstance(item, _PLAIN):
            continue
        if isinstance(item, int):
            if not CHECKPOINT_INT_MIN <= item <= CHECKPOINT_INT_MAX:
                return at
        elif id(item) not in seen:
            seen.add(id(item))
            stack.extend((at + place, child) for place, child in _inside(item))
    return None


def _refuse_unknown(item: Any) -> Any:
    """orjson's fallback for ``unserializable``: a model as its fields, a set as a list; anything
    else orjson has no form for makes it give up (the serializer then decides)."""
    plain = _as_plain(item)
    if plain is None:
        raise TypeError(type(item).__name__)
    return plain


def _plain_json(value: Any) -> bool:
    """True when orjson encodes ``value`` whole (models as their fields, sets as lists): then every
    integer in it fits a checkpoint and LangGraph's serializer stores it, so neither
    ``unstorable_int`` nor ``unserializable`` has anything to find."""
    try:
        orjson.dumps(value, default=_refuse_unknown, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return False
    return True


def unserializable(value: Any) -> str | None:
    """Why a checkpoint cannot store ``value`` (LangGraph's serializer refuses it), or None. JSON
    data (orjson encodes it, in C) needs no more; anything else (bytes, a message, a class of the
    graph's) is tried on LangGraph's default serializer."""
    try:
        orjson.dumps(value, default=_refuse_unknown, option=orjson.OPT_NON_STR_KEYS)
        return None
    except TypeError:
        pass
    try:
        _SERDE.dumps_typed(value)
    except Exception as exc:
        return f"a checkpoint cannot store it: {exc}"
    return None


def _first_error(error: ValidationError) -> str:
    """The first pydantic error message, with its location when it has one."""
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first['msg']}" if where else first["msg"]


def _adapter(annotation: Any, config: ConfigDict) -> TypeAdapter[Any]:
    """A TypeAdapter under the model's config, unless the type carries a config of its own."""
    try:
        return TypeAdapter(annotation, config=config or None)
    except PydanticUserError as error:
        if error.code != "type-adapter-config-unused":
            raise
        return TypeAdapter(annotation)


class FieldContract:
    """How one field validates: its adapter, its display type and its reducer, if any.

    ``as_is`` is the type (int, float, bool or str) whose values the adapter would return
    unchanged, when the field declares no constraint, so a write of exactly that type skips it.
    """

    __slots__ = ("adapter", "as_is", "empty", "expected", "name", "reducer")

    def __init__(self, name: str, info: FieldInfo, config: ConfigDict, reducer: Reducer | None) -> None:
        self.name = name
        self.adapter = _adapter(Annotated[info.annotation, info], config)
        self.as_is = _as_is_type(info, config)
        self.expected = type_name(info.annotation)
        self.reducer = reducer
        self.empty: Callable[[], Any] | None = (
            None if info.is_required() else lambda: copy.deepcopy(info.get_default(call_default_factory=True))
        )

    def takes_as_is(self, value: Any) -> bool:
        """True when ``value`` lands unchanged without validation and a checkpoint stores it: a
        value of exactly ``as_is`` (an int in the checkpoint's range, a str in ASCII, which
        every serializer takes)."""
        kind = type(value)
        if kind is not self.as_is:
            return False
        if kind is int:
            return bool(CHECKPOINT_INT_MIN <= value <= CHECKPOINT_INT_MAX)
        return kind is not str or bool(value.isascii())


def _as_is_type(info: FieldInfo, config: ConfigDict) -> type | None:
    """The field's type if its validator returns values of exactly that type unchanged: a bare
    int, bool, str (no string option in the model config) or float (inf and nan allowed)."""
    kind = info.annotation if info.annotation in _AS_IS else None
    if kind is None or info.metadata:
        return None
    if kind is str and any(config.get(option) for option in _STR_OPTIONS):
        return None
    if kind is float and config.get("allow_inf_nan") is False:
        return None
    return kind


class StateContract:
    """The state schema as the kernel enforces it: field types, reducers and validators."""

    def __init__(self, schema: type[BaseModel], reducers: Mapping[str, Reducer]) -> None:
        self.schema = schema
        config = schema.model_config.copy()
        for key in _MODEL_ONLY_CONFIG:
            config.pop(key, None)
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
            if spec.takes_as_is(value):
                landed[field] = value
                continue
            fitted = (
                self._fit(node, spec, value, writer)
                if spec.reducer is None
                else self._fit_reduced(node, spec, value, writer)
            )
            landed[field] = self._storable(node, spec, fitted, writer)
        if self.has_validators and current is not None and landed:
            return self._validate_whole(node, landed, current, writer)
        return landed

    def check_values(self, where: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Check run input or an operator's update: known fields, declared types."""
        self.require_fields(where, values)
        checked = {}
        for field, value in values.items():
            spec = self.fields[field]
            checked[field] = self._storable(where, spec, self._fit(where, spec, value, where), where)
        return checked

    def initial_state(self, where: str, values: Mapping[str, Any]) -> BaseModel:
        """The state a run starts from: ``values`` checked as run input, the rest defaults."""
        checked = self.check_values(where, values)
        try:
            return self.schema.model_validate(checked)
        except ValidationError as error:
            raise RunInputError(
                f"{where}: {_first_error(error)}", hint="give every required state field a value of its type"
            ) from None

    @staticmethod
    def _storable(node: str, spec: FieldContract, value: Any, writer: str | None) -> Any:
        """``value``, if a checkpoint can store it: an integer wider than 64 bits is refused, and so
        is an object LangGraph's serializer has no form for (refused here, naming node and field,
        rather than when the checkpoint is saved, which failed the turn with no word of either)."""
        if _plain_json(value):
            return value
        at = unstorable_int(value, spec.name)
        if at is not None:
            raise StateTypeError(
                node,
                spec.name,
                spec.expected,
                value,
                f"{at} is outside the integers a checkpoint can store "
                f"({CHECKPOINT_INT_MIN} .. {CHECKPOINT_INT_MAX})",
                writer=writer,
            )
        unstorable = unserializable(value)
        if unstorable is not None:
            raise StateTypeError(node, spec.name, spec.expected, value, unstorable, writer=writer)
        return value

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
