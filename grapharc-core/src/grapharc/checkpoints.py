"""Durable graph state: LangGraph's SQLite checkpointer behind the ``sqlite:`` store scheme."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from grapharc.errors import GraphARCError


class CheckpointStoreError(GraphARCError):
    """A checkpoint store location that cannot be opened."""


def open_sqlite_checkpointer(location: str, kind: str = "checkpoints") -> Any:
    """A ``SqliteSaver`` over the file at ``location`` (created with its folder if missing)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    if not location:
        raise CheckpointStoreError("sqlite: needs a file path, as in sqlite:runs/checkpoints.db")
    path = Path(location).expanduser()
    if path.is_dir():
        raise CheckpointStoreError(f"checkpoint store {path} is a directory; name a file in it")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = sqlite3.connect(str(path), check_same_thread=False)
        saver = SqliteSaver(connection)
        saver.setup()
    except sqlite3.DatabaseError as exc:
        raise CheckpointStoreError(f"cannot use {path} as a checkpoint store: {exc}") from exc
    return saver
