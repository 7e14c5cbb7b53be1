"""One assistant store over SQL: what ``SqliteAssistantStore`` (core) and ``PostgresAssistantStore``
(grapharc-postgres) share; each supplies only its dialect (``grapharc.session.sql_dialect``) and
its transactions, as the run stores do (``grapharc.runs.sql_store``)."""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
import dataclasses
import json
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager

from grapharc.assistants.contracts import Revise
from grapharc.assistants.errors import AssistantExistsError, UnknownAssistantError, UnknownVersionError
from grapharc.assistants.records import (
    CREATE,
    DELETE,
    SET_LATEST,
    UPDATE,
    VERSION_COLUMNS,
    Assistant,
    AssistantChange,
    AssistantVersion,
    change_of,
    version_of,
    version_row,
)
from grapharc.session.sql_dialect import Connection, Row, SqlDialect

CURRENT = """SELECT v.*, a.created_at AS assistant_created_at, a.updated_at AS assistant_updated_at,
    (SELECT MAX(n.version) FROM {assistant_versions} AS n WHERE n.assistant_id = a.assistant_id) AS newest
    FROM {assistants} AS a JOIN {assistant_versions} AS v
    ON v.assistant_id = a.assistant_id AND v.version = a.version"""
"""Each assistant with the version runs use and the number of its newest."""


class SqlAssistantStore(SqlDialect, ABC):
    """The ``AssistantStore`` contract over SQL tables; a subclass supplies the dialect."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic change or consistent read: committed on success, rolled back on any error."""

    @abstractmethod
    def close(self) -> None:
        """Release the store's connections; closing twice is harmless."""

    def create(self, first: AssistantVersion, *, if_exists: str = "raise") -> tuple[Assistant, bool]:
        """``AssistantStore.create``: a racing create of the same id inserts nothing (ON CONFLICT)."""
        with self._write() as conn:
            made = self._run(conn, "INSERT INTO {assistants} (assistant_id, graph_id, version, created_at, "
                                   "updated_at) VALUES (?, ?, 1, ?, ?) ON CONFLICT (assistant_id) DO NOTHING",
                             (first.assistant_id, first.graph_id, first.created_at, first.created_at))
            if made.rowcount == 0:
                if if_exists == "do_nothing":
                    return self._get(conn, first.assistant_id), False
                raise AssistantExistsError(first.assistant_id)
            self._add_version(conn, dataclasses.replace(first, version=1), CREATE)
            return self._get(conn, first.assistant_id), True

    def get(self, assistant_id: str) -> Assistant:
        """``AssistantStore.get``."""
        with self._write() as conn:
            return self._get(conn, assistant_id)

    def search(self, graph_id: str | None = None) -> builtins.list[Assistant]:
        """``AssistantStore.search``."""
        where, args = ("WHERE a.graph_id = ?", (graph_id,)) if graph_id is not None else ("", ())
        with self._write() as conn:
            rows = self._run(conn, f"{CURRENT} {where} ORDER BY a.created_at DESC, a.assistant_id",
                             args).fetchall()
        return [_assistant(row) for row in rows]

    def update(self, assistant_id: str, revise: Revise) -> Assistant:
        """``AssistantStore.update``: the assistant's row is locked while ``revise`` runs."""
        with self._write() as conn:
            current = self._get(conn, assistant_id, lock=True)
            made = dataclasses.replace(revise(current), assistant_id=assistant_id, version=current.newest + 1)
            self._add_version(conn, made, UPDATE)
            return self._get(conn, assistant_id)

    def set_latest(self, assistant_id: str, version: int, *, by: str, at: float) -> Assistant:
        """``AssistantStore.set_latest``."""
        with self._write() as conn:
            self._get(conn, assistant_id, lock=True)
            row = self._run(conn, "SELECT * FROM {assistant_versions} WHERE assistant_id = ? AND version = ?",
                            (assistant_id, version)).fetchone()
            if row is None:
                raise UnknownVersionError(assistant_id, version)
            chosen = version_of(row)
            self._choose(conn, chosen, at)
            self._log(conn, AssistantChange(assistant_id, SET_LATEST, version, chosen.graph_id, by, at,
                                            chosen.keys()))
            return self._get(conn, assistant_id)

    def delete(self, assistant_id: str, *, by: str, at: float) -> None:
        """``AssistantStore.delete``."""
        with self._write() as conn:
            current = self._get(conn, assistant_id, lock=True).current
            self._log(conn, AssistantChange(assistant_id, DELETE, current.version, current.graph_id, by, at))
            self._run(conn, "DELETE FROM {assistant_versions} WHERE assistant_id = ?", (assistant_id,))
            self._run(conn, "DELETE FROM {assistants} WHERE assistant_id = ?", (assistant_id,))

    def versions(self, assistant_id: str) -> builtins.list[AssistantVersion]:
        """``AssistantStore.versions``."""
        with self._write() as conn:
            self._get(conn, assistant_id)
            rows = self._run(conn, "SELECT * FROM {assistant_versions} WHERE assistant_id = ? "
                                   "ORDER BY version DESC", (assistant_id,)).fetchall()
        return [version_of(row) for row in rows]

    def changes(self, assistant_id: str) -> builtins.list[AssistantChange]:
        """``AssistantStore.changes``."""
        with self._write() as conn:
            rows = self._run(conn, "SELECT * FROM {assistant_changes} WHERE assistant_id = ? ORDER BY seq",
                             (assistant_id,)).fetchall()
        return [change_of(row) for row in rows]

    def _add_version(self, conn: Connection, version: AssistantVersion, action: str) -> None:
        """Insert ``version``, make it the one runs use, and log ``action`` by its creator."""
        marks = ", ".join("?" for _ in VERSION_COLUMNS)
        insert = f"INSERT INTO {{assistant_versions}} ({', '.join(VERSION_COLUMNS)}) VALUES ({marks})"  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        self._run(conn, insert, version_row(version))
        self._choose(conn, version, version.created_at)
        self._log(conn, AssistantChange(version.assistant_id, action, version.version, version.graph_id,
                                        version.created_by, version.created_at, version.keys()))

    def _choose(self, conn: Connection, version: AssistantVersion, at: float) -> None:
        """Make ``version`` the one its assistant's runs use, as of ``at``."""
        chosen = (version.version, version.graph_id, at, version.assistant_id)
        self._run(conn, "UPDATE {assistants} SET version = ?, graph_id = ?, updated_at = ? "
                        "WHERE assistant_id = ?", chosen)

    def _log(self, conn: Connection, change: AssistantChange) -> None:
        """Append ``change`` to its assistant's change log."""
        self._run(conn, "INSERT INTO {assistant_changes} (assistant_id, action, version, graph_id, "
                        "changed_by, at, keys) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (change.assistant_id, change.action, change.version, change.graph_id, change.by, change.at,
                   json.dumps(change.keys)))

    def _get(self, conn: Connection, assistant_id: str, *, lock: bool = False) -> Assistant:
        """The assistant, its row locked until the transaction ends with ``lock`` (where the
        dialect locks rows), or ``UnknownAssistantError``."""
        if lock:
            self._run(conn, f"SELECT assistant_id FROM {{assistants}} WHERE assistant_id = ? {self.LOCK}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                      (assistant_id,))
        row = self._run(conn, f"{CURRENT} WHERE a.assistant_id = ?", (assistant_id,)).fetchone()
        if row is None:
            raise UnknownAssistantError(assistant_id)
        return _assistant(row)


def _assistant(row: Row) -> Assistant:
    """A row of ``CURRENT`` as a record."""
    return Assistant(current=version_of(row), created_at=row["assistant_created_at"],
                     updated_at=row["assistant_updated_at"], newest=row["newest"])
