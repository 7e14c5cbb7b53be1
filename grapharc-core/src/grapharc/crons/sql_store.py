"""One cron store over SQL: what ``SqliteCronStore`` (core) and ``PostgresCronStore``
(grapharc-postgres) share; each supplies only its dialect (``grapharc.session.sql_dialect``) and
its transactions, as the run stores do (``grapharc.runs.sql_store``).

A slot is claimed by one conditional UPDATE (``... WHERE cron_id = ? AND next_run_at = ?``): in
SQLite under the write lock, in PostgreSQL under the row lock the UPDATE takes (a racing claim
waits, then finds ``next_run_at`` moved and changes nothing), so of the schedulers racing for a
slot exactly one gets it. Searches filter by column in SQL and by metadata here, then page: a
server holds schedules by the hundred, not the million.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
import dataclasses
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Any

from grapharc.crons.contracts import Revise
from grapharc.crons.errors import UnknownCronError
from grapharc.crons.records import COLUMNS, SORT_COLUMNS, CronFilter, CronRecord, record_of, row_values
from grapharc.runs.contracts import check_page
from grapharc.session.sql_dialect import Connection, SqlDialect

_INSERT = (f"INSERT INTO {{crons}} ({', '.join(COLUMNS)}) "  # noqa: S608 -- GraphARC's own column names
           f"VALUES ({', '.join('?' for _ in COLUMNS)})")
_REPLACE = (f"UPDATE {{crons}} SET {', '.join(f'{c} = ?' for c in COLUMNS[1:])} "  # noqa: S608 -- as above
            "WHERE cron_id = ?")


class SqlCronStore(SqlDialect, ABC):
    """The ``CronStore`` contract over SQL tables; a subclass supplies the dialect."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic change or consistent read: committed on success, rolled back on any error."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Connection]:
        """One consistent read that takes no write lock."""

    @abstractmethod
    def close(self) -> None:
        """Release the store's connections; closing twice is harmless."""

    def add(self, cron: CronRecord) -> CronRecord:
        """``CronStore.add``."""
        with self._write() as conn:
            self._run(conn, _INSERT, row_values(cron))
            return self._get(conn, cron.cron_id)

    def get(self, cron_id: str) -> CronRecord:
        """``CronStore.get``."""
        with self._write() as conn:
            return self._get(conn, cron_id)

    def search(self, where: CronFilter, *, limit: int | None = None, offset: int = 0,
               sort_by: str = "created_at", descending: bool = True) -> builtins.list[CronRecord]:
        """``CronStore.search``."""
        check_page(limit, offset)
        column = SORT_COLUMNS.get(sort_by)
        if column is None:
            raise ValueError(f"cannot sort schedules by {sort_by!r}; by one of {', '.join(SORT_COLUMNS)}")
        order = "DESC" if descending else "ASC"
        found = self._matching(where, f"ORDER BY {column} {order}, cron_id {order}")
        return found[offset:None if limit is None else offset + limit]

    def count(self, where: CronFilter) -> int:
        """``CronStore.count``."""
        return len(self._matching(where, ""))

    def update(self, cron_id: str, revise: Revise) -> CronRecord:
        """``CronStore.update``."""
        with self._write() as conn:
            current = self._get(conn, cron_id, lock=True)
            revised = dataclasses.replace(revise(current), cron_id=cron_id, created_at=current.created_at)
            values = row_values(revised)
            self._run(conn, _REPLACE, (*values[1:], cron_id))
            return self._get(conn, cron_id)

    def delete(self, cron_id: str) -> None:
        """``CronStore.delete``."""
        with self._write() as conn:
            if self._run(conn, "DELETE FROM {crons} WHERE cron_id = ?", (cron_id,)).rowcount == 0:
                raise UnknownCronError(cron_id)

    def due(self, now: float) -> builtins.list[CronRecord]:
        """``CronStore.due``."""
        with self._read() as conn:
            rows = self._run(conn, "SELECT * FROM {crons} WHERE enabled AND next_run_at IS NOT NULL "
                                   "AND next_run_at <= ? ORDER BY next_run_at, cron_id", (now,)).fetchall()
        return [record_of(row) for row in rows]

    def next_due(self) -> float | None:
        """``CronStore.next_due``: the due index's least slot."""
        with self._read() as conn:
            row = self._run(conn, "SELECT MIN(next_run_at) AS slot FROM {crons} "
                                  "WHERE enabled AND next_run_at IS NOT NULL").fetchone()
        return None if row["slot"] is None else float(row["slot"])

    def claim_slot(self, cron_id: str, slot: float, next_run_at: float | None) -> bool:
        """``CronStore.claim_slot``: one conditional UPDATE (see the module docstring)."""
        with self._write() as conn:
            moved = self._run(conn, "UPDATE {crons} SET next_run_at = ? WHERE cron_id = ? AND enabled "
                                    "AND next_run_at = ?", (next_run_at, cron_id, slot))
            return bool(moved.rowcount == 1)

    def _matching(self, where: CronFilter, order: str) -> builtins.list[CronRecord]:
        """Every schedule ``where`` admits, in ``order`` (an ORDER BY clause of known columns): its
        columns tested in SQL, then its metadata here."""
        conditions, args = [], []
        for column, value in (("assistant_id", where.assistant_id), ("thread_id", where.thread_id),
                              ("enabled", where.enabled), ("user_id", where.user_id)):
            if value is not None:
                conditions.append(f"{column} = ?")
                args.append(value)
        clause = f"WHERE {' AND '.join(conditions)}" if conditions else ""
        with self._write() as conn:
            rows = self._run(conn, f"SELECT * FROM {{crons}} {clause} {order}", tuple(args)).fetchall()  # noqa: S608 -- only known columns are formatted in; values are bound
        return [cron for cron in map(record_of, rows) if where.admits(cron)]

    def _get(self, conn: Connection, cron_id: str, *, lock: bool = False) -> CronRecord:
        """The schedule, its row locked (``LOCK``) if asked, or ``UnknownCronError``."""
        row: Any = self._run(conn, f"SELECT * FROM {{crons}} WHERE cron_id = ? {self.LOCK if lock else ''}",  # noqa: S608 -- the dialect's own clause
                             (cron_id,)).fetchone()
        if row is None:
            raise UnknownCronError(cron_id)
        return record_of(row)
