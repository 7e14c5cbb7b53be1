"""An assistant as a store keeps it: each version's configuration, the version runs use, and the
log of who changed it.

A version is a registered graph (``graph_id``) with the ``config`` (``configurable``,
``recursion_limit``, ``tags``, ``metadata``: a run's ``RunConfig``) and ``context`` a run of it
starts from, and the assistant's ``metadata``, ``name`` and ``description``; versions are
numbered from 1 and never change. The assistant's ``version`` is the one runs use (the newest,
unless ``set_latest`` chose another). A change (create, update, set_latest, delete) is logged
with who made it and the names, never the values, of the keys the version sets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

CREATE, UPDATE, SET_LATEST, DELETE = "create", "update", "set_latest", "delete"
ACTIONS = (CREATE, UPDATE, SET_LATEST, DELETE)


@dataclass(frozen=True, slots=True)
class AssistantVersion:
    """One version of an assistant, as created (``created_by``: who asked)."""

    assistant_id: str
    version: int
    graph_id: str
    config: dict[str, Any]
    context: dict[str, Any] | None
    metadata: dict[str, Any]
    name: str
    description: str | None
    created_at: float
    created_by: str

    def keys(self) -> list[str]:
        """The names of what this version sets (``config.configurable.model``, ``context.tone``,
        ``metadata.team``...): what the change log records instead of the values."""
        config = {key: value for key, value in self.config.items() if key not in ("configurable", "metadata")}
        named = [*(f"config.{key}" for key in config),
                 *(f"config.configurable.{key}" for key in self.config.get("configurable") or {}),
                 *(f"config.metadata.{key}" for key in self.config.get("metadata") or {}),
                 *(f"context.{key}" for key in self.context or {}),
                 *(f"metadata.{key}" for key in self.metadata)]
        return sorted(named)


@dataclass(frozen=True, slots=True)
class Assistant:
    """An assistant: the version runs use, when it was created and last changed, its newest version."""

    current: AssistantVersion
    created_at: float
    updated_at: float
    newest: int

    @property
    def assistant_id(self) -> str:
        return self.current.assistant_id

    @property
    def graph_id(self) -> str:
        return self.current.graph_id


@dataclass(frozen=True, slots=True)
class AssistantChange:
    """One entry of an assistant's change log: ``action`` to ``version`` by ``by`` at ``at``,
    and the names of the keys that version sets."""

    assistant_id: str
    action: str
    version: int
    graph_id: str
    by: str
    at: float
    keys: list[str] = field(default_factory=list)
    seq: int = 0


def version_row(version: AssistantVersion) -> tuple[Any, ...]:
    """The values a store inserts for a version, in ``VERSION_COLUMNS`` order (JSON as text,
    characters as they are)."""
    return (version.assistant_id, version.version, version.graph_id, _text(version.config),
            None if version.context is None else _text(version.context), _text(version.metadata),
            version.name, version.description, version.created_at, version.created_by)


VERSION_COLUMNS = ("assistant_id", "version", "graph_id", "config", "context", "metadata", "name",
                   "description", "created_at", "created_by")


def version_of(row: Any) -> AssistantVersion:
    """A stored version row as a record."""
    return AssistantVersion(
        assistant_id=row["assistant_id"], version=row["version"], graph_id=row["graph_id"],
        config=json.loads(row["config"]),
        context=None if row["context"] is None else json.loads(row["context"]),
        metadata=json.loads(row["metadata"]), name=row["name"], description=row["description"],
        created_at=row["created_at"], created_by=row["created_by"])


def change_of(row: Any) -> AssistantChange:
    """A stored change-log row as a record."""
    return AssistantChange(assistant_id=row["assistant_id"], action=row["action"], version=row["version"],
                           graph_id=row["graph_id"], by=row["changed_by"], at=row["at"],
                           keys=json.loads(row["keys"]), seq=row["seq"])


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
