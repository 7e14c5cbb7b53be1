"""Checkpoint allowlists: the classes a graph's checkpoints hold, named to LangGraph's serializer.

LangGraph's ``JsonPlusSerializer`` stores a pydantic model, enum, dataclass or named tuple
as its module and name, and rebuilds it on read only if that pair is on its msgpack
allowlist (or among LangGraph's own safe types). Its default today allows every class
with a warning that future versions will refuse them; with ``LANGGRAPH_STRICT_MSGPACK=true``
(read once, when LangGraph is imported) it refuses them now and hands back the raw
payload instead. ``GraphARC.compile()`` therefore names every class the graph's state can
hold and applies that list to the checkpointer it is given, so checkpoints read back the
same under today's default, strict mode and the future default.

What is named: every pydantic model, enum, dataclass and named tuple reachable from the
state's annotations (through unions, ``Optional``, ``Annotated``, ``Literal`` members,
containers, generic parameters and the fields of nested models), the same for the states
of subgraphs hosted as nodes and for fan-out workers' annotations (their items travel in
checkpointed ``Send``s), and the kernel's own ``WorkerOutcome``. A class that only turns up
at run time (a value in an ``Any`` field) cannot be seen here: name it on the
checkpointer's serializer, ``JsonPlusSerializer(allowed_msgpack_modules=[...])``.

Whose list wins: nobody's is dropped. A serializer with an allowlist of its own (the
user's, or LangGraph's strict default) keeps it and gains ours through LangGraph's
``BaseCheckpointSaver.with_allowlist``. LangGraph's allow-everything default (also what
``allowed_msgpack_modules=True`` means) is replaced by an explicit list, LangGraph's safe
types plus ours, keeping its other settings (pickle fallback, JSON allowlist, encryption).
Any other serializer is left as it is. The checkpointer passed in is never modified: the
result is a shallow copy that shares its storage, as ``with_allowlist`` returns.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Collection, Iterable
from enum import Enum
from typing import Any, Literal, NewType, get_args, get_origin, get_type_hints

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel
from typing_extensions import is_typeddict

from grapharc.runtime.fanout import WorkerOutcome

__all__ = ["KERNEL_TYPES", "allowlisted", "annotation_hints", "checkpoint_allowlist"]

Allowlist = frozenset[tuple[str, str]]

KERNEL_TYPES: tuple[type, ...] = (WorkerOutcome,)
"""Classes the kernel itself writes into state, whatever the state's annotations say."""


def checkpoint_allowlist(*roots: Any) -> Allowlist:
    """``(module, name)`` of every class a checkpoint may hold, given the annotations ``roots``.

    ``roots`` are state models and other type hints; ``KERNEL_TYPES`` are always included.
    The key is the class's ``__name__``, as LangGraph's serializer writes it.
    """
    return frozenset((cls.__module__, cls.__name__) for cls in _reachable_classes((*roots, *KERNEL_TYPES)))


def annotation_hints(owner: Callable[..., Any] | type) -> list[Any]:
    """The resolved annotations of a function (parameters, return) or a class (fields).

    Empty when they cannot be resolved (an annotation naming a type not importable here):
    the allowlist is then shorter, and LangGraph names any class it refuses.
    """
    try:
        return list(get_type_hints(owner).values())
    except (NameError, TypeError):
        return []


def allowlisted(checkpointer: Any, allowlist: Collection[tuple[str, ...]]) -> Any:
    """``checkpointer`` reading ``allowlist``'s classes back without warnings (see the module docstring).

    Anything that is not a LangGraph checkpointer (None, True for a subgraph) is returned as is.
    """
    if not isinstance(checkpointer, BaseCheckpointSaver):
        return checkpointer
    explicit = _explicit(checkpointer.serde)
    if explicit is not checkpointer.serde:
        checkpointer = copy.copy(checkpointer)
        checkpointer.serde = explicit
    return checkpointer.with_allowlist(sorted(allowlist))


def _explicit(serde: SerializerProtocol) -> SerializerProtocol:
    """LangGraph's allow-everything serializer as one with an explicit (safe-types-only) list.

    LangGraph offers no public accessor for a serializer's lists, so they are read here (and
    grapharc-core caps langgraph-checkpoint to the minor release
    tests/grapharc-core/test_private_names.py checks them against). A custom unpack hook or a
    subclass is the owner's own logic and is left alone.
    """
    if isinstance(serde, EncryptedSerializer):
        inner = _explicit(serde.serde)
        return serde if inner is serde.serde else EncryptedSerializer(serde.cipher, inner)
    if (
        type(serde) is JsonPlusSerializer
        and serde._allowed_msgpack_modules is True
        and not serde._custom_unpack_ext_hook
    ):
        return JsonPlusSerializer(
            pickle_fallback=serde.pickle_fallback,
            allowed_json_modules=serde._allowed_json_modules,
            allowed_msgpack_modules=None,
        )
    return serde


def _reachable_classes(roots: Iterable[Any]) -> set[type]:
    """The models, enums, dataclasses and named tuples reachable from the type hints ``roots``."""
    found: set[type] = set()
    seen: set[Any] = set()
    pending = list(roots)
    while pending:
        hint = pending.pop()
        try:
            if hint in seen:
                continue
            seen.add(hint)
        except TypeError:  # an unhashable hint (Annotated metadata); only classes can recur
            pass
        if _is_rebuilt_class(hint):
            found.add(hint)
        pending.extend(_parts(hint))
    return found


def _is_rebuilt_class(hint: Any) -> bool:
    """True for the classes LangGraph's serializer stores by name and rebuilds on read."""
    if not isinstance(hint, type):
        return False
    return (
        issubclass(hint, BaseModel | Enum)
        or dataclasses.is_dataclass(hint)
        or (issubclass(hint, tuple) and hasattr(hint, "_fields"))
    )


def _parts(hint: Any) -> list[Any]:
    """The type hints ``hint`` is made of: a model's fields, a generic's arguments, and so on."""
    if isinstance(hint, NewType):
        return [hint.__supertype__]
    origin = get_origin(hint)
    if origin is Literal:
        return [type(value) for value in get_args(hint) if isinstance(value, Enum)]
    if origin is not None:
        return [origin, *get_args(hint)]
    if not isinstance(hint, type):
        return []
    if issubclass(hint, BaseModel):
        return [field.annotation for field in hint.model_fields.values()]
    if dataclasses.is_dataclass(hint) or is_typeddict(hint) or issubclass(hint, tuple):
        return annotation_hints(hint)
    return []
