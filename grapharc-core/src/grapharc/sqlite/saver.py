"""LangGraph's ``SqliteSaver`` with the extended capabilities LangGraph's conformance suite tests.

LangGraph's SQLite saver implements the base capabilities only. ``prune``, ``delete_for_runs``
and ``copy_thread`` are written here against its two tables (``checkpoints`` and ``writes``, as
its own ``setup`` creates them), so retention and copying a thread work on core's store as on
PostgreSQL's; so is GraphARC's ``discard_writes``, which a rollback needs
(``grapharc.session.rollback``). Each is one transaction (``prune``: one per thread) begun with
``BEGIN IMMEDIATE``,
which takes the file's write lock before the first read: a run saving to the same file waits
for it, so what was read is what is deleted and a checkpoint saved meanwhile is never lost.

``prune(strategy="keep_latest")`` keeps what LangGraph's PostgreSQL saver keeps: the latest
checkpoint of each namespace, with its pending writes, left without a parent; a subgraph
call's namespace goes with the root checkpoint the call started from, once that one is saved
(a ``checkpointer=True`` subgraph, whose namespace has no task id, keeps its latest). It refuses
threads whose checkpoints carry a ``DeltaChannel``'s counters, before pruning any thread: that
channel rebuilds its value from older checkpoints' writes, which keeping only the latest would
lose. (LangGraph writes the counters on every checkpoint that does not snapshot its delta
channels, so a thread without them loses nothing.)

Fenced (``fenced_by``, as ``grapharc.session.fencing.fence`` asks), every write first checks the
lease of each thread it changes, as ``FencedSaver`` would, without a wrapper around it: a put,
a task's writes, deleting, pruning, or copying to a thread this process holds a lease on is
refused with ``LeaseLostError`` once the lease is lost; deleting runs' checkpoints checks the held
threads those runs wrote to. The async saver runs these same methods (``one_trip_saver``).

Durability, a decision: each connection it sets up commits with ``synchronous=NORMAL`` in WAL mode,
as the session store does (LangGraph's saver leaves SQLite's default, ``FULL``: an fsync per
commit, nine per three-node run, each about 120 µs of CPU and over a millisecond of the
checkpointer thread's time here). In WAL mode ``NORMAL`` never corrupts the file; a power loss
or an operating system crash (not a process crash, which loses nothing) may lose the last
commits, which a thread then recovers from as from a runner killed before it saved them.

In a call run in place on the event loop (``grapharc.stores.in_place``: a turn's settling reads
where the thread stands through it), it reads only, and never waits: its connection taken without
waiting for another thread using it, read-only (``query_only``) for the call; a write, or a
connection in use, is ``WouldWait``, and the whole call goes where it may wait.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.serde.types import INTERRUPT
from langgraph.checkpoint.sqlite import SqliteSaver

from grapharc.stores import in_place

if TYPE_CHECKING:
    from grapharc.session.fencing import Leases

PRUNE_STRATEGIES = ("keep_latest", "delete")

CHECKPOINT_COLUMNS = ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type",
                      "checkpoint", "metadata")
"""The columns of LangGraph's ``checkpoints`` table, all of which a copy carries."""
WRITE_COLUMNS = ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx", "channel",
                 "type", "value")
"""The columns of LangGraph's ``writes`` table, all of which a copy carries."""


def _copy_of(table: str, columns: Sequence[str]) -> str:
    """A statement copying a thread's rows of ``table`` to another thread (``?``: target, source)."""
    rest = ", ".join(column for column in columns if column != "thread_id")
    return (f"INSERT OR REPLACE INTO {table} (thread_id, {rest}) "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"SELECT ?, {rest} FROM {table} WHERE thread_id = ?")


_COPY = (_copy_of("checkpoints", CHECKPOINT_COLUMNS), _copy_of("writes", WRITE_COLUMNS))

_DELTA_THREAD = (
    "SELECT 1 FROM checkpoints WHERE thread_id = ? AND ("
    "json_type(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot') IS NOT NULL "
    "OR json_type(CAST(metadata AS TEXT), '$.delta_writes_versioned') IS NOT NULL) LIMIT 1")
# SQLite reads a bare column of an aggregate query off the row MAX() chose: each namespace's latest
_HEADS = "SELECT checkpoint_ns, MAX(checkpoint_id), metadata FROM checkpoints WHERE thread_id = ? GROUP BY 1"
_SAVED_ROOT = "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?"
_DROP_NAMESPACE = ("DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?",
                   "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?")
# writes go by the checkpoints deleted: a write of a checkpoint not saved yet is not the prune's
_KEEP_HEAD = (
    "DELETE FROM writes WHERE thread_id = :thread AND checkpoint_ns = :ns AND checkpoint_id IN "
    "(SELECT checkpoint_id FROM checkpoints WHERE thread_id = :thread AND checkpoint_ns = :ns "
    "AND checkpoint_id <> :head)",
    "DELETE FROM checkpoints WHERE thread_id = :thread AND checkpoint_ns = :ns AND checkpoint_id <> :head",
    "UPDATE checkpoints SET parent_checkpoint_id = NULL "
    "WHERE thread_id = :thread AND checkpoint_ns = :ns AND checkpoint_id = :head")

_OF_RUNS = ("SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints "
            "WHERE json_extract(CAST(metadata AS TEXT), '$.run_id') IN (SELECT value FROM json_each(?))")
_DROP_CHECKPOINT = (
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
    "UPDATE checkpoints SET parent_checkpoint_id = NULL "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND parent_checkpoint_id = ?")

_DISCARD_WRITES = ("DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
                   "AND channel <> ? AND task_id IN (SELECT value FROM json_each(?))")


class SqliteCheckpointSaver(SqliteSaver):
    """``SqliteSaver`` that also prunes threads, deletes runs' checkpoints and copies threads, and
    fences its writes when ``fenced_by`` made it (see the module)."""

    leases: Leases | None = None
    """The leases a copy made by ``fenced_by`` checks before each write; None: unfenced."""
    WRITES_ON_LOOP = True
    """A call run in place may read through it; what would write or wait there is refused at once
    (see the module)."""

    def fenced_by(self, leases: Leases) -> Self:
        """This saver (sharing its connection and lock) refusing, before each write, a write to a
        thread ``leases`` holds whose lease is no longer current (``LeaseLostError``)."""
        fenced = copy.copy(self)
        fenced.leases = leases
        return fenced

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """``SqliteSaver.cursor``; in a call run in place, a read-only one that never waits (see the
        module)."""
        scope = in_place.current()
        if scope is None:
            with super().cursor(transaction) as cur:
                yield cur
            return
        if not self.is_setup or not self.lock.acquire(blocking=False):
            raise scope.would_wait()
        try:
            self.conn.execute("PRAGMA query_only = ON")
            cur = self.conn.cursor()
            try:
                yield cur
            except sqlite3.OperationalError as exc:  # a write (read-only here), or a busy file
                raise scope.would_wait() from exc
            finally:
                cur.close()
                if self.conn.in_transaction:
                    self.conn.rollback()
                self.conn.execute("PRAGMA query_only = OFF")
        finally:
            self.lock.release()

    def setup(self) -> None:
        """LangGraph's ``setup`` (the file in WAL mode, its tables), then ``synchronous=NORMAL`` on
        this connection (see the module)."""
        if self.is_setup:
            return
        super().setup()
        self.conn.execute("PRAGMA synchronous=NORMAL")

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        self._check_threads([config["configurable"]["thread_id"]])
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self._check_threads([config["configurable"]["thread_id"]])
        super().put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self._check_threads([thread_id])
        super().delete_thread(thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Delete every checkpoint of ``thread_ids`` (``"delete"``), or all but the latest of each
        namespace (``"keep_latest"``, see the module); ``NotImplementedError`` naming the threads
        that use a ``DeltaChannel`` refuses a ``"keep_latest"`` before any thread is pruned."""
        if isinstance(thread_ids, str):
            raise TypeError("thread_ids must be a sequence of thread IDs, not a str")
        if strategy not in PRUNE_STRATEGIES:
            raise ValueError(f"Unknown prune strategy: {strategy!r}")
        threads = [str(thread_id) for thread_id in thread_ids]
        self._check_threads(threads)
        if strategy == "delete":
            for thread_id in threads:
                super().delete_thread(thread_id)
            return
        with self.cursor(transaction=False) as cur:
            _refuse_delta_threads(cur, threads)
        for thread_id in threads:
            with self._transaction() as cur:
                _refuse_delta_threads(cur, [thread_id])  # one that started using one since the check
                _keep_latest(cur, thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata names one of ``run_ids`` as its ``run_id``, with their
        writes; a checkpoint whose parent goes is left without one."""
        if isinstance(run_ids, str):
            raise TypeError("run_ids must be a sequence of run IDs, not a str")
        runs = [str(run_id) for run_id in run_ids]
        if not runs:
            return
        if self.leases is not None:
            self.leases.check_runs(self, runs)
        with self._transaction() as cur:
            doomed = cur.execute(_OF_RUNS, (json.dumps(runs),)).fetchall()
            for statement in _DROP_CHECKPOINT:
                cur.executemany(statement, doomed)

    def discard_writes(self, config: RunnableConfig, task_ids: Sequence[str]) -> None:
        """Delete the pending writes the tasks ``task_ids`` saved on the checkpoint ``config`` names,
        but their interrupts (what a rolled-back run answered and did goes; what was asked stays)."""
        at = config["configurable"]
        self._check_threads([at["thread_id"]])
        with self._transaction() as cur:
            cur.execute(_DISCARD_WRITES, (str(at["thread_id"]), at.get("checkpoint_ns", ""),
                                          at["checkpoint_id"], INTERRUPT, json.dumps(list(task_ids))))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of the source thread, in every namespace, to the target
        (a checkpoint the target already holds under the same id is replaced by the source's)."""
        self._check_threads([target_thread_id])
        with self._transaction() as cur:
            for statement in _COPY:
                cur.execute(statement, (str(target_thread_id), str(source_thread_id)))

    def _check_threads(self, thread_ids: Sequence[str]) -> None:
        """Refuse, if fenced, a write to threads one of which this process lost the lease of."""
        if self.leases is not None:
            self.leases.check_threads(str(thread_id) for thread_id in thread_ids)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Cursor]:
        """A cursor in a transaction holding the file's write lock from its start, committed at the
        end or rolled back if the block raises."""
        with self.cursor(transaction=False) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                self.conn.rollback()
                raise
            self.conn.commit()


def _refuse_delta_threads(cur: sqlite3.Cursor, thread_ids: Sequence[str]) -> None:
    """Refuse keeping only the latest checkpoints of threads that use a ``DeltaChannel``."""
    delta = sorted(thread_id for thread_id in thread_ids
                   if cur.execute(_DELTA_THREAD, (thread_id,)).fetchone() is not None)
    if delta:
        raise NotImplementedError(
            f"keep_latest can't prune threads that use a DeltaChannel: {', '.join(delta)}")


def _keep_latest(cur: sqlite3.Cursor, thread_id: str) -> None:
    """Delete all but each namespace's latest checkpoint of ``thread_id``, and the namespaces of
    subgraph calls started from a saved root checkpoint that goes."""
    heads = cur.execute(_HEADS, (thread_id,)).fetchall()
    kept = {namespace: head for namespace, head, _ in heads}
    calls = {namespace for namespace, _, metadata in heads
             if ":" in namespace and _root_goes(cur, thread_id, _root_of(metadata), kept.get(""))}
    for namespace in calls:
        for statement in _DROP_NAMESPACE:
            cur.execute(statement, (thread_id, namespace))
    for namespace, head in kept.items():
        if namespace not in calls:
            for statement in _KEEP_HEAD:
                cur.execute(statement, {"thread": thread_id, "ns": namespace, "head": head})


def _root_of(metadata: bytes | str | None) -> str | None:
    """The root graph's checkpoint a subgraph's checkpoint started from, as its metadata names it."""
    parents = json.loads(metadata).get("parents") if metadata else None
    root = parents.get("") if isinstance(parents, dict) else None
    return root if isinstance(root, str) else None


def _root_goes(cur: sqlite3.Cursor, thread_id: str, root: str | None, kept_root: str | None) -> bool:
    """Whether ``root`` is a saved root checkpoint other than the one kept."""
    return root is not None and root != kept_root and \
        cur.execute(_SAVED_ROOT, (thread_id, root)).fetchone() is not None
