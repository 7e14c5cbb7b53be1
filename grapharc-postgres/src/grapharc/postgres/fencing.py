"""LangGraph's Postgres savers with each fenced write checking its lease in its own transaction.

Core fences a leased thread's checkpoint writes (``grapharc.session.fencing``). Here the
checkpoints live beside the session rows, so the check is made where it cannot be
overtaken: a write of a thread whose lease ``fenced_by(leases)`` holds opens a
transaction, reads the thread's session row ``FOR SHARE`` (a takeover, which updates
that row, waits for the write to commit) and refuses with ``LeaseLostError`` unless it
still carries the lease's token; then LangGraph's own ``put``/``put_writes`` run inside that
transaction, on a saver LangGraph's public constructor makes over its one connection. Other
writes run as LangGraph's do. Only LangGraph's public names are used (``test_dependencies``
checks the ones relied on).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Self

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import INTERRUPT
from psycopg_pool import AsyncConnectionPool

from grapharc.postgres.schema import PREFIX
from grapharc.session.fencing import Leases, lost
from grapharc.session.lease import Lease
from grapharc.session.records import RUNNING
from grapharc.session.sql_dialect import dialect_sql

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

    from grapharc.postgres.database import Conn, PostgresDatabase

HELD_FOR_WRITE = dialect_sql("SELECT 1 AS held FROM {sessions} WHERE thread_id = ? AND lease_token = ? "
                             "AND status = ? FOR SHARE", PREFIX, "%s")
"""The thread's session row if ``lease`` is still its current one, locked against a takeover
until the write's transaction ends."""


_OF_RUNS = ("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
            "WHERE metadata->>'run_id' = ANY(%s)")
_DROP_CHECKPOINT = (
    "DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
    "DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
    "UPDATE checkpoints SET parent_checkpoint_id = NULL "
    "WHERE thread_id = %s AND checkpoint_ns = %s AND parent_checkpoint_id = %s")
"""The checkpoints some runs wrote, and how one goes: its writes, itself, and its children's link to it
(a run's blobs stay: blobs are kept by channel version, which later checkpoints may share)."""
_DISCARD_WRITES = ("DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_ns = %s "
                   "AND checkpoint_id = %s AND channel <> %s AND task_id = ANY(%s)")


def _fence_args(lease: Lease) -> tuple[str, str, str]:
    return (lease.thread_id, lease.token, RUNNING)


class _Fencing:
    """What both savers share: the leases they fence by, and LangGraph's saver a fenced write runs on."""

    PINNED: ClassVar[type[PostgresSaver] | type[AsyncPostgresSaver]]
    """LangGraph's saver class, made over a fenced write's one connection."""
    leases: Leases | None = None
    serde: SerializerProtocol

    def fenced_by(self, leases: Leases) -> Self:
        """This saver (sharing its pool) fencing the writes of threads ``leases`` holds."""
        fenced = copy.copy(self)
        fenced.leases = leases
        return fenced

    def _lease(self, config: Any) -> Lease | None:
        return None if self.leases is None else self.leases.lease_for(config)

    def _pinned_to(self, conn: Any) -> Any:
        """LangGraph's saver over ``conn`` alone (its constructor takes a connection as well as a pool)
        with this one's serializer: its statements run inside ``conn``'s open transaction."""
        return self.PINNED(conn, serde=self.serde)


class FencingPostgresSaver(_Fencing, PostgresSaver):
    """LangGraph's ``PostgresSaver`` over a database's pool; with ``fenced_by``, its writes check the
    lease in their transaction."""

    PINNED = PostgresSaver

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database
        super().__init__(database.pool)

    @property
    def conn(self) -> ConnectionPool[Conn]:
        """The database's pool as it is now: in a forked child, the child's own, never the parent's
        (``grapharc.postgres.database``), however long ago this saver was made."""
        return self.database.pool

    @conn.setter
    def conn(self, pool: Any) -> None:
        """Only LangGraph's constructor sets it, to the pool it was given: the database's."""
        if pool is not self.database.pool:
            raise ValueError("a FencingPostgresSaver uses its database's pool, no other connection")

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        with self._fenced(config) as saver:
            return PostgresSaver.put(saver, config, checkpoint, metadata, new_versions)

    def put_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        with self._fenced(config) as saver:
            PostgresSaver.put_writes(saver, config, writes, task_id, task_path)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata names one of ``run_ids`` as its ``run_id``, with their
        writes (a checkpoint whose parent goes is left without one), in one transaction that first
        checks the lease of each thread they are on that this saver's leases hold (as a put does).
        LangGraph's ``PostgresSaver`` has no ``delete_for_runs``; a run rolled back needs one."""
        if isinstance(run_ids, str):
            raise TypeError("run_ids must be a sequence of run IDs, not a str")
        runs = [str(run_id) for run_id in run_ids]
        if not runs:
            return
        with self.lock, self.conn.connection() as conn, conn.transaction():
            doomed = [(r["thread_id"], r["checkpoint_ns"], r["checkpoint_id"])
                      for r in conn.execute(_OF_RUNS, (runs,)).fetchall()]
            for thread_id in sorted({thread_id for thread_id, _ns, _id in doomed}):
                lease = self._lease({"configurable": {"thread_id": thread_id}})
                if lease is not None and conn.execute(HELD_FOR_WRITE, _fence_args(lease)).fetchone() is None:
                    raise lost(lease)
            with conn.cursor() as cur:
                for statement in _DROP_CHECKPOINT:
                    cur.executemany(statement, doomed)

    def discard_writes(self, config: Any, task_ids: Sequence[str]) -> None:
        """Delete the pending writes the tasks ``task_ids`` saved on the checkpoint ``config`` names,
        but their interrupts (what a rolled-back run answered and did goes; what was asked stays),
        in a transaction that checks the thread's lease first when this saver's leases hold it."""
        at, lease = config["configurable"], self._lease(config)
        with self.lock, self.conn.connection() as conn, conn.transaction():
            if lease is not None and conn.execute(HELD_FOR_WRITE, _fence_args(lease)).fetchone() is None:
                raise lost(lease)
            conn.execute(_DISCARD_WRITES, (str(at["thread_id"]), at.get("checkpoint_ns", ""),
                                           at["checkpoint_id"], INTERRUPT, list(task_ids)))

    @contextmanager
    def _fenced(self, config: Any) -> Iterator[PostgresSaver]:
        """This saver, or, for a leased thread, LangGraph's over one connection in a transaction that
        checked the lease (holding this saver's lock meanwhile, as each of its own calls does)."""
        lease = self._lease(config)
        if lease is None:
            yield self
            return
        with self.lock, self.conn.connection() as conn, conn.transaction():
            if conn.execute(HELD_FOR_WRITE, _fence_args(lease)).fetchone() is None:
                raise lost(lease)
            yield self._pinned_to(conn)


class FencingAsyncPostgresSaver(_Fencing, AsyncPostgresSaver):
    """LangGraph's ``AsyncPostgresSaver`` over an async pool; with ``fenced_by``, its writes check the
    lease in their transaction."""

    PINNED = AsyncPostgresSaver

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        super().__init__(pool)
        self.pool = pool

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        async with self._fenced(config) as saver:
            return await AsyncPostgresSaver.aput(saver, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        async with self._fenced(config) as saver:
            await AsyncPostgresSaver.aput_writes(saver, config, writes, task_id, task_path)

    @asynccontextmanager
    async def _fenced(self, config: Any) -> AsyncIterator[AsyncPostgresSaver]:
        """Async ``FencingPostgresSaver._fenced``."""
        lease = self._lease(config)
        if lease is None:
            yield self
            return
        async with self.lock, self.pool.connection() as conn, conn.transaction():
            held = await conn.execute(HELD_FOR_WRITE, _fence_args(lease))
            if await held.fetchone() is None:
                raise lost(lease)
            yield self._pinned_to(conn)
