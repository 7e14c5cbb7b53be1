"""The private copy of the state a node receives, so in-place mutation cannot bypass the write
channel; built field by field, about half what ``copy.deepcopy`` costs per step."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

_ATOMIC = frozenset({int, float, str, bool, bytes, type(None)})
_deepcopy = copy.deepcopy
_set = object.__setattr__


def _fresh(value: Any) -> Any:
    """A private copy of one state value.

    Immutable values are shared (checked inline by the callers too, which saves a call per
    value), containers are rebuilt, pydantic models are copied
    field by field (a frozen model holding only immutable values is shared), anything
    else goes through ``copy.deepcopy``. No memo is needed: a state that LangGraph
    validated into the model cannot contain a cycle.
    """
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is list:
        return [item if type(item) in _ATOMIC else _fresh(item) for item in value] if value else []
    if kind is dict:
        return {key: item if type(item) in _ATOMIC else _fresh(item) for key, item in value.items()}
    if kind is tuple:
        return tuple(item if type(item) in _ATOMIC else _fresh(item) for item in value)
    if isinstance(value, BaseModel):
        if (
            value.model_config.get("frozen")
            and value.__pydantic_private__ is None
            and _ATOMIC.issuperset(map(type, value.__dict__.values()))
        ):
            return value
        return copy_for_node(value)
    return _deepcopy(value)


def copy_for_node(state: Any) -> Any:
    """The deep copy a node receives, so in-place mutation cannot bypass the write channel.

    For a pydantic model this is what ``model_copy(deep=True)`` does, with ``_fresh``
    in place of ``copy.deepcopy`` for the field values (about half the cost per step).
    """
    if not isinstance(state, BaseModel):
        return _fresh(state)
    cls = type(state)
    clone = cls.__new__(cls)
    _set(clone, "__dict__", {name: value if type(value) in _ATOMIC else _fresh(value)
                             for name, value in state.__dict__.items()})
    extra, private = state.__pydantic_extra__, state.__pydantic_private__
    _set(clone, "__pydantic_extra__", None if extra is None else _deepcopy(extra))
    _set(clone, "__pydantic_fields_set__", set(state.__pydantic_fields_set__))
    _set(clone, "__pydantic_private__", None if private is None else _deepcopy(private))
    return clone
