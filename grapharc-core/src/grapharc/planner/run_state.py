"""The run state a registry's kinds need: a base state plus each field a kind declares with a type.

A kind declaring ``writes={"answer": str}`` brings its field with it. The field starts
empty: the type called with no arguments (``""``, ``0``, ``[]``, a model's defaults), else
None when the type allows it; ``Annotated[T, Field(default=...)]`` names any other start.
One field declared with two different types (by two kinds, or by a kind and the base) is
refused naming both, never silently settled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, get_origin

from pydantic import BaseModel, PydanticUserError, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from grapharc.errors import GraphARCError
from grapharc.planner.registry import NodeSpec


class DeclaredWritesError(GraphARCError):
    """A kind's typed writes that no run state can hold as declared."""

    hint = ('declare each field with one type everywhere, e.g. writes={"answer": str}, and give a '
            "type without an empty value a start: Annotated[T, Field(default=...)]")


def state_with_writes(base: type[BaseModel], specs: Iterable[NodeSpec], *, name: str,
                      owners: Mapping[str, str] | None = None) -> type[BaseModel]:
    """``base`` plus every typed field of ``specs`` it lacks (``base`` itself when there is none).

    ``owners`` names the distribution each kind came from, for the error messages.
    """
    declared = {field: (info.annotation, f"the state {base.__name__}")
                for field, info in base.model_fields.items()}
    added: dict[str, Any] = {}
    for spec in specs:
        owner = (owners or {}).get(spec.name)
        who = f"kind {spec.name!r}" + (f" (from {owner})" if owner else "")
        for field, annotation in spec.write_types.items():
            bare = _bare_type(annotation, who, field)
            if field in declared:
                earlier, by = declared[field]
                if earlier != bare:
                    raise DeclaredWritesError(f"{who} declares field {field!r} as {_shown(bare)}, "
                                              f"but {by} declares it as {_shown(earlier)}")
                continue
            if hasattr(BaseModel, field):
                raise DeclaredWritesError(f"{who} declares field {field!r}, a name pydantic models "
                                          "reserve", hint="choose another field name")
            declared[field] = (bare, who)
            added[field] = _definition(annotation, who, field)
    if not added:
        return base
    return create_model(name, __base__=base, **added)


def _bare_type(annotation: Any, who: str, field: str) -> Any:
    """The declared type without its ``Annotated`` metadata; refuses what pydantic cannot validate."""
    try:
        TypeAdapter(annotation)
    except (PydanticUserError, TypeError) as exc:
        raise DeclaredWritesError(f"{who} declares field {field!r} as {annotation!r}, which is not a "
                                  f"type pydantic can validate: {exc}".splitlines()[0]) from None
    return FieldInfo.from_annotation(annotation).annotation


def _definition(annotation: Any, who: str, field: str) -> Any:
    """The ``create_model`` definition of one new field: its type and where it starts."""
    if not FieldInfo.from_annotation(annotation).is_required():
        return annotation
    adapter = TypeAdapter(annotation)
    makers: tuple[Callable[[], Any], ...] = (get_origin(annotation) or annotation, type(None))
    for make in makers:
        try:
            return annotation, adapter.validate_python(make())
        except (TypeError, ValueError):
            continue
    raise DeclaredWritesError(f"{who} declares field {field!r} as {_shown(annotation)}, which has no "
                              "empty value to start a run with")


def _shown(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else repr(annotation).replace("typing.", "")
