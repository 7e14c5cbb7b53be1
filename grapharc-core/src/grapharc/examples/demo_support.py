"""What every demo stage shares: thread ids, the scripted-or-real model, its checkpoint store."""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any, get_args
from uuid import uuid4

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from grapharc.errors import GraphARCError

SCRIPTED_LABEL = "scripted (free, deterministic)"
_INTEGER = re.compile(r"-?\d+")


class DemoInputError(GraphARCError):
    """A demo was asked for something it cannot do: a bad value, an unknown or finished thread."""


def new_thread_id(stage: str) -> str:
    """A fresh, readable thread id for one demo run."""
    return f"{stage}-{uuid4().hex[:12]}"


def thread_config(thread_id: str) -> dict[str, Any]:
    """The LangGraph config that addresses ``thread_id``."""
    return {"configurable": {"thread_id": thread_id}}


def state_serde(schema: type[BaseModel]) -> JsonPlusSerializer:
    """A checkpoint serializer that allows exactly the models and enums ``schema`` holds.

    LangGraph's default one warns on every such type it reads back (and will refuse them);
    it builds this allowlist itself only under ``LANGGRAPH_STRICT_MSGPACK``.
    """
    allowed: set[tuple[str, str]] = set()
    pending: list[Any] = [schema]
    while pending:
        kind = pending.pop()
        pending.extend(get_args(kind))
        if not isinstance(kind, type) or not issubclass(kind, BaseModel | Enum):
            continue
        key = (kind.__module__, kind.__qualname__)
        if key not in allowed:
            allowed.add(key)
            if issubclass(kind, BaseModel):
                pending.extend(field.annotation for field in kind.model_fields.values())
    return JsonPlusSerializer(allowed_msgpack_modules=sorted(allowed))


def open_checkpoints(path: Path, schema: type[BaseModel]) -> Any:
    """The SQLite checkpoint store at ``path``, reading back ``schema``'s types without warnings."""
    from grapharc.stores import open_store

    saver = open_store(f"sqlite:{path}", kind="checkpoints").saver()
    saver.serde = state_serde(schema)
    return saver


def demo_model(spec: str | None, script: Sequence[str], *, name: str) -> Any:
    """The chat model ``spec`` names, or a scripted one replaying ``script`` (free, deterministic).

    Scripts repeat when they run out, so a longer loop than the script still gets replies.
    """
    from grapharc.models import get_model

    if spec is not None:
        return get_model(spec)
    return get_model(f"mock/{name}", responses=list(script), cycle=True)


def ask(model: Any, prompt: str) -> str:
    """One model call with one human message; the reply's text."""
    content = model.invoke([HumanMessage(prompt)]).content
    if isinstance(content, str):
        return content
    return "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in content)


def first_integer(text: str) -> int | None:
    """The first whole number written in ``text``, if any (how the loops read a model's answer)."""
    match = _INTEGER.search(text)
    return int(match.group()) if match else None
